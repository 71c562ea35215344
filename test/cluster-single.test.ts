/**
 * The cluster view against one real etcd 3.4 member on loopback, TTL 3 s.
 * Each scenario uses its own key root, and ends with the checker.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Etcd3 } from 'etcd3';
import { createEtcdClient } from '../src/cluster/etcd.js';
import type { ClusterEvent } from '../src/cluster/index.js';
import {
  checkClusterInvariants,
  createTestCertificates,
  type EtcdServer,
  fleetPlugin,
  readPrefix,
  recordClusterEvents,
  siblingModule,
  spawnFleetProcess,
  startEtcdServer,
  startFleetMember,
  startFleetReader,
  startPausableProxy,
  stopChild,
} from '../src/testing/harness/index.js';
import { createTempDir, waitFor } from '../src/testing/index.js';

const TTL = 3;
const fixture = siblingModule(import.meta.url, './fixtures/cluster-daemon');
let etcd: EtcdServer;
let admin: Etcd3;
let rootSeq = 0;
const nextRoot = () => `/t${++rootSeq}-${process.pid}/`;

before(async () => {
  etcd = await startEtcdServer({ watchProgressNotifyIntervalMs: 500 });
  admin = createEtcdClient({ endpoints: [etcd.endpoint] });
});
after(async () => {
  admin?.close();
  await etcd?.stop();
});

const removals = (events: ClusterEvent[], node: string) =>
  events.filter(
    (e) =>
      (e.type === 'plugin-removed' && e.plugin.node === node) ||
      (e.type === 'node-removed' && e.node.node === node),
  );

describe('cluster view, one etcd member', () => {
  test('two daemons with three plugins each are seen within 1 s; a health flip is exactly one update', async () => {
    const prefix = nextRoot();
    await using reader = await startFleetReader([etcd.endpoint], { prefix });
    const log = recordClusterEvents(reader);
    const started = Date.now();
    await using a = await startFleetMember(
      [etcd.endpoint],
      'node-a',
      [0, 1, 2].map((i) => fleetPlugin('node-a', i)),
      {
        prefix,
        leaseTtlSeconds: TTL,
      },
    );
    await using b = await startFleetMember(
      [etcd.endpoint],
      'node-b',
      [0, 1, 2].map((i) => fleetPlugin('node-b', i)),
      {
        prefix,
        leaseTtlSeconds: TTL,
      },
    );
    await waitFor(
      '2 nodes and 6 plugins',
      () => reader.nodes().length === 2 && reader.plugins().length === 6,
    );
    const elapsed = Date.now() - started;
    assert.ok(elapsed < 1_000, `the reader saw the fleet after ${elapsed} ms`);
    assert.deepEqual(
      reader.plugins({ node: 'node-b' }).map((p) => [p.name, p.health.state, p.facts.vendorVersion]),
      [0, 1, 2].map((i) => [`csi-${i}.example.com`, 'healthy', '1.2.3']),
    );

    const before = log.events.length;
    a.registry.registerPlugin(
      fleetPlugin('node-a', 1, { health: 'unhealthy', healthMessage: 'probe failed' }),
    );
    await waitFor('the update', () => log.events.slice(before).some((e) => e.type === 'plugin-updated'));
    await waitFor('writer a in sync', () => a.writer.inSync);
    await checkClusterInvariants({ client: admin, reader, events: log.events, root: prefix });
    const changes = log.events.slice(before);
    assert.equal(changes.length, 1, JSON.stringify(changes.map((e) => e.type)));
    const [change] = changes;
    assert.equal(change?.type, 'plugin-updated');
    if (change?.type === 'plugin-updated') {
      assert.deepEqual(change.plugin.health, { state: 'unhealthy', message: 'probe failed' });
      assert.equal(change.previous.health.state, 'healthy');
    }
    assert.equal(reader.plugins({ name: 'csi-1.example.com', node: 'node-a' })[0]?.health.state, 'unhealthy');
    assert.equal(b.writer.leaseState, 'held');
  });

  test('kill -9 of a daemon removes all its keys within TTL + 1 s, in one revision', async () => {
    const prefix = nextRoot();
    await using reader = await startFleetReader([etcd.endpoint], { prefix });
    const log = recordClusterEvents(reader);
    const daemon = spawnFleetProcess(fixture, {
      endpoints: [etcd.endpoint],
      nodeName: 'crash',
      instance: 'crash-1',
      prefix,
      ttlSeconds: TTL,
      plugins: [0, 1, 2].map((i) => fleetPlugin('crash', i)),
    });
    try {
      await daemon.waitLine('synced', (l) => l.synced === true);
      await waitFor('3 plugins', () => reader.plugins({ node: 'crash' }).length === 3);
      const killedAt = Date.now();
      daemon.child.kill('SIGKILL');
      await waitFor('node removed', () => reader.nodes().length === 0, { timeoutMs: 30_000 });
      const elapsed = Date.now() - killedAt;
      assert.ok(elapsed <= TTL * 1000 + 1000, `entries vanished ${elapsed} ms after kill -9 (TTL ${TTL} s)`);
      const removed = removals(log.events, 'crash');
      assert.equal(removed.length, 4);
      assert.equal(new Set(removed.map((e) => e.revision)).size, 1, 'one revision');
      await checkClusterInvariants({ client: admin, reader, events: log.events, root: prefix });
      assert.equal((await readPrefix(admin, prefix)).kvs.size, 0);
    } finally {
      await stopChild(daemon.child, 'SIGKILL');
    }
  });

  test('SIGTERM revokes the lease: entries vanish in under 1 s, in one revision', async () => {
    const prefix = nextRoot();
    await using reader = await startFleetReader([etcd.endpoint], { prefix });
    const log = recordClusterEvents(reader);
    const daemon = spawnFleetProcess(fixture, {
      endpoints: [etcd.endpoint],
      nodeName: 'term',
      instance: 'term-1',
      prefix,
      ttlSeconds: 30,
      plugins: [0, 1, 2].map((i) => fleetPlugin('term', i)),
    });
    try {
      await daemon.waitLine('synced', (l) => l.synced === true);
      await waitFor('3 plugins', () => reader.plugins({ node: 'term' }).length === 3);
      const sentAt = Date.now();
      daemon.child.kill('SIGTERM');
      await waitFor('node removed', () => reader.nodes().length === 0);
      const elapsed = Date.now() - sentAt;
      assert.ok(elapsed < 1_000, `entries vanished ${elapsed} ms after SIGTERM`);
      await daemon.exited;
      assert.equal(daemon.child.exitCode, 0);
      const removed = removals(log.events, 'term');
      assert.equal(removed.length, 4);
      assert.equal(new Set(removed.map((e) => e.revision)).size, 1, 'one revision');
      await checkClusterInvariants({ client: admin, reader, events: log.events, root: prefix });
    } finally {
      await stopChild(daemon.child, 'SIGKILL');
    }
  });

  test('a restart inside the TTL with one plugin gone: no events for the others, exactly one removal, old lease revoked', async () => {
    const prefix = nextRoot();
    await using reader = await startFleetReader([etcd.endpoint], { prefix });
    const log = recordClusterEvents(reader);
    const plugins = [0, 1, 2].map((i) => fleetPlugin('restart', i));
    const config = {
      endpoints: [etcd.endpoint],
      nodeName: 'restart',
      instance: 'restart-1',
      prefix,
      ttlSeconds: TTL,
    };
    const first = spawnFleetProcess(fixture, { ...config, plugins });
    let second: ReturnType<typeof spawnFleetProcess> | undefined;
    try {
      const synced = await first.waitLine('synced', (l) => l.synced === true);
      await waitFor('3 plugins', () => reader.plugins({ node: 'restart' }).length === 3);
      const oldLease = String(synced.lease);
      const mark = log.events.length;
      first.child.kill('SIGKILL');
      await first.exited;
      second = spawnFleetProcess(fixture, { ...config, plugins: plugins.slice(0, 2) });
      const resynced = await second.waitLine('synced', (l) => l.synced === true);
      assert.notEqual(String(resynced.lease), oldLease);
      // Wait past the old lease's TTL, so an expiry would have shown up.
      await new Promise((resolve) => setTimeout(resolve, TTL * 1000 + 1000));
      const leases = await admin.leaseClient.leaseLeases();
      assert.ok(!leases.leases.some((l) => l.ID === oldLease), 'the old lease was revoked');
      await checkClusterInvariants({ client: admin, reader, events: log.events, root: prefix });
      const since = log.events.slice(mark);
      const pluginEvents = since.filter((e) => e.type.startsWith('plugin-'));
      assert.deepEqual(
        pluginEvents.map((e) => (e.type === 'plugin-removed' ? [e.type, e.plugin.name] : [e.type])),
        [['plugin-removed', 'csi-2.example.com']],
      );
      assert.ok(
        !since.some((e) => e.type === 'node-removed' || e.type === 'node-added'),
        'the node never flapped',
      );
      assert.equal(reader.plugins({ node: 'restart' }).length, 2);
    } finally {
      await stopChild(first.child, 'SIGKILL');
      if (second) await stopChild(second.child, 'SIGKILL');
    }
  });

  test('a duplicate node name is refused: the second daemon does not publish and reports it', async () => {
    const prefix = nextRoot();
    await using reader = await startFleetReader([etcd.endpoint], { prefix });
    const log = recordClusterEvents(reader);
    await using first = await startFleetMember([etcd.endpoint], 'twin', [fleetPlugin('twin', 0)], {
      prefix,
      leaseTtlSeconds: TTL,
      instance: 'first',
    });
    await waitFor('first published', () => first.writer.inSync);
    const conflicts: string[] = [];
    await using second = await startFleetMember([etcd.endpoint], 'twin', [fleetPlugin('twin', 7)], {
      prefix,
      leaseTtlSeconds: TTL,
      instance: 'second',
      onEvent: (event) => {
        if (event.type === 'conflict') conflicts.push(event.message);
      },
    });
    await waitFor('the conflict', () => second.writer.conflict);
    assert.equal(second.writer.leaseState, 'conflict');
    assert.match(conflicts[0] ?? '', /node name "twin" is already published by instance first/);
    // The first keeps publishing undisturbed.
    first.registry.registerPlugin(fleetPlugin('twin', 1));
    await waitFor('first in sync', () => first.writer.inSync);
    await waitFor('two plugins of the first', () => reader.plugins({ node: 'twin' }).length === 2);
    await checkClusterInvariants({ client: admin, reader, events: log.events, root: prefix });
    const raw = await readPrefix(admin, prefix);
    for (const entry of raw.kvs.values()) assert.equal(entry.lease, first.writer.lease);
    assert.deepEqual(
      reader.plugins().map((p) => p.name),
      ['csi-0.example.com', 'csi-1.example.com'],
    );
    assert.equal(conflicts.length, 1, 'reported once, not on every retry');
  });

  test('compaction while a reader is behind: it re-lists and emits only the differences', async () => {
    const prefix = nextRoot();
    const proxy = await startPausableProxy({ host: '127.0.0.1', port: Number(new URL(etcd.endpoint).port) });
    try {
      await using reader = await startFleetReader([proxy.endpoint], { prefix, staleAfterMs: 60_000 });
      const log = recordClusterEvents(reader);
      await using member = await startFleetMember(
        [etcd.endpoint],
        'busy',
        [0, 1, 2, 3, 4].map((i) => fleetPlugin('busy', i)),
        { prefix, leaseTtlSeconds: 30 },
      );
      await waitFor('5 plugins', () => reader.plugins().length === 5);
      proxy.partition();
      // 100 writes while the reader is cut off: 4 plugins churn, one is removed, three are added.
      for (let round = 0; round < 25; round++) {
        for (const i of [0, 1, 2, 3])
          member.registry.registerPlugin(fleetPlugin('busy', i, { round: String(round) }));
        await waitFor('writer in sync', () => member.writer.inSync);
      }
      member.registry.deregisterPlugin('CSIPlugin', 'csi-4.example.com', fleetPlugin('busy', 4).allocId);
      for (const i of [5, 6, 7]) member.registry.registerPlugin(fleetPlugin('busy', i));
      await waitFor('writer in sync', () => member.writer.inSync);
      const { revision } = await readPrefix(admin, prefix);
      await admin.kv.compact({ revision, physical: true });
      const mark = log.events.length;
      proxy.heal();
      await waitFor('the re-list', () => log.events.slice(mark).some((e) => e.type === 'relisted'), {
        timeoutMs: 30_000,
      });
      await checkClusterInvariants({ client: admin, reader, events: log.events, root: prefix });
      const diff = log.events
        .slice(mark)
        .filter((e) => e.type !== 'relisted' && e.type !== 'fresh' && e.type !== 'stale');
      const summary = diff.map((e) => `${e.type}:${'plugin' in e ? e.plugin.name : ''}`).sort();
      assert.deepEqual(summary, [
        'plugin-added:csi-5.example.com',
        'plugin-added:csi-6.example.com',
        'plugin-added:csi-7.example.com',
        'plugin-removed:csi-4.example.com',
        'plugin-updated:csi-0.example.com',
        'plugin-updated:csi-1.example.com',
        'plugin-updated:csi-2.example.com',
        'plugin-updated:csi-3.example.com',
      ]);
      for (const plugin of reader.plugins().filter((p) => Number(p.name[4]) < 4))
        assert.equal(plugin.facts.round, '24');
    } finally {
      await proxy.close();
    }
  });
});

describe('cluster view, one etcd member: progress and auth', () => {
  test('an idle reader stays current on progress notifications and does not re-list', async () => {
    const prefix = nextRoot();
    await using reader = await startFleetReader([etcd.endpoint], {
      prefix,
      progressTimeoutMs: 1_500,
      probeIntervalMs: 200,
    });
    await using member = await startFleetMember([etcd.endpoint], 'idle', [fleetPlugin('idle', 0)], {
      prefix,
      leaseTtlSeconds: TTL,
    });
    await waitFor('the plugin', () => reader.plugins().length === 1);
    const revision = BigInt(reader.status.revision);
    // Writes elsewhere advance the store; only progress notifications can tell the reader.
    await admin.put('/elsewhere/x').value('1');
    await waitFor(
      'the revision carried by a progress notification',
      () => BigInt(reader.status.revision) > revision,
      {
        timeoutMs: 10_000,
      },
    );
    // Three progress timeouts of idleness: progress notifications (every 500 ms) keep the watch alive.
    const started = Date.now();
    await waitFor('4.5 s of idleness', () => Date.now() - started > 4_500, { intervalMs: 100 });
    assert.equal(reader.status.relists, 0);
    assert.equal(member.writer.leaseState, 'held');
  });

  test('a watch that sends neither data nor progress notifications is re-listed', async () => {
    // etcd's default progress interval (10 min) stands in for a stalled stream.
    const silent = await startEtcdServer();
    const client = createEtcdClient({ endpoints: [silent.endpoint] });
    try {
      await using reader = await startFleetReader([silent.endpoint], {
        progressTimeoutMs: 1_000,
        probeIntervalMs: 200,
      });
      const log = recordClusterEvents(reader);
      await using member = await startFleetMember([silent.endpoint], 'quiet', [fleetPlugin('quiet', 0)], {
        leaseTtlSeconds: TTL,
      });
      await waitFor('the plugin', () => reader.plugins().length === 1);
      const relist = await waitFor('a re-list of the silent watch', () =>
        log.events.find(
          (e) => e.type === 'relisted' && e.reason === 'no watch data or progress notification',
        ),
      );
      assert.ok(relist);
      await checkClusterInvariants({ client, reader, events: log.events, root: '/berth/v1/' });
      assert.deepEqual(
        log.events.filter((e) => e.type.startsWith('plugin-')).map((e) => e.type),
        ['plugin-added'],
        'the re-list emitted no differences',
      );
      assert.equal(member.writer.leaseState, 'held');
    } finally {
      client.close();
      await silent.stop();
    }
  });

  test('user/password auth: a client with the credentials publishes, one without is refused', async () => {
    const secured = await startEtcdServer();
    const root = createEtcdClient({ endpoints: [secured.endpoint] });
    try {
      await root.role('root').create();
      await (await root.user('root').create('root-pw')).addRole('root');
      await root.auth.authEnable({});
      await using member = await startFleetMember([secured.endpoint], 'authed', [fleetPlugin('authed', 0)], {
        leaseTtlSeconds: TTL,
        client: createEtcdClient({
          endpoints: [secured.endpoint],
          auth: { username: 'root', password: 'root-pw' },
        }),
      });
      await waitFor('published with credentials', () => member.writer.inSync);
      const anonymous = createEtcdClient({ endpoints: [secured.endpoint] });
      try {
        await assert.rejects(
          anonymous.getAll().prefix('/berth/v1/').keys(),
          /user name is empty|permission denied|auth/i,
        );
      } finally {
        anonymous.close();
      }
      const authed = createEtcdClient({
        endpoints: [secured.endpoint],
        auth: { username: 'root', password: 'root-pw' },
      });
      try {
        assert.equal((await authed.getAll().prefix('/berth/v1/plugins/').keys()).length, 1);
      } finally {
        authed.close();
      }
    } finally {
      root.close();
      await secured.stop();
    }
  });
});

describe('cluster view, one etcd member: TLS', () => {
  test('mutual TLS from the connection settings: with the client certificate it publishes, without it fails', async () => {
    await using dir = createTempDir('berth-tls-');
    const certs = createTestCertificates(dir.path);
    const secured = await startEtcdServer({
      tls: { cert: certs.serverCert, key: certs.serverKey, ca: certs.ca },
    });
    try {
      assert.match(secured.endpoint, /^https:/);
      const tls = { ca: certs.ca, cert: certs.clientCert, key: certs.clientKey };
      await using reader = await startFleetReader([secured.endpoint], {
        client: createEtcdClient({ endpoints: [secured.endpoint], tls }),
      });
      await using member = await startFleetMember(
        [secured.endpoint],
        'tls-node',
        [fleetPlugin('tls-node', 0)],
        {
          leaseTtlSeconds: TTL,
          client: createEtcdClient({ endpoints: [secured.endpoint], tls }),
        },
      );
      await waitFor('published over TLS', () => member.writer.inSync);
      await waitFor('read over TLS', () => reader.plugins({ node: 'tls-node' }).length === 1);
      const noClientCert = createEtcdClient(
        { endpoints: [secured.endpoint], tls: { ca: certs.ca } },
        { callTimeoutMs: 3_000 },
      );
      try {
        await assert.rejects(noClientCert.get('/berth/v1/nodes/tls-node').string());
      } finally {
        noClientCert.close();
      }
      assert.throws(
        () => createEtcdClient({ endpoints: [secured.endpoint], tls: { ca: dir.join('missing.pem') } }),
        /etcd tls\.ca: cannot read .*missing\.pem/,
      );
    } finally {
      await secured.stop();
    }
  });
});
