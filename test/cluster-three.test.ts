/**
 * The cluster view against a real three-member etcd 3.4 cluster on loopback,
 * TTL 5 s (room for elections on a loaded machine). Each scenario uses its own
 * key root and ends with the checker.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Etcd3 } from 'etcd3';
import { createEtcdClient } from '../src/cluster/etcd.js';
import type { ClusterEvent } from '../src/cluster/index.js';
import {
  checkClusterInvariants,
  type EtcdCluster,
  type FleetProcess,
  fleetPlugin,
  recordClusterEvents,
  siblingModule,
  spawnFleetProcess,
  startEtcdCluster,
  startFleetMember,
  startFleetReader,
  startPausableProxy,
  stopChild,
} from '../src/testing/harness/index.js';
import { waitFor } from '../src/testing/index.js';

const TTL = 5;
const fixture = siblingModule(import.meta.url, './fixtures/cluster-daemon');
let etcd: EtcdCluster;
let admin: Etcd3;
let rootSeq = 0;
const nextRoot = () => `/c${++rootSeq}-${process.pid}/`;

before(async () => {
  etcd = await startEtcdCluster({ members: 3, watchProgressNotifyIntervalMs: 500 });
  admin = createEtcdClient({ endpoints: etcd.endpoints });
});
after(async () => {
  admin?.close();
  await etcd?.stop();
});

const losses = (events: ClusterEvent[]) =>
  events.filter(
    (e) =>
      e.type === 'plugin-removed' ||
      e.type === 'node-removed' ||
      e.type === 'plugin-added' ||
      e.type === 'node-added',
  );

describe('cluster view, three etcd members', () => {
  test('killing a follower, then the leader, changes nothing for readers', async () => {
    const prefix = nextRoot();
    await using reader = await startFleetReader(etcd.endpoints, { prefix, staleAfterMs: 30_000 });
    const log = recordClusterEvents(reader);
    await using a = await startFleetMember(
      etcd.endpoints,
      'n-a',
      [0, 1].map((i) => fleetPlugin('n-a', i)),
      {
        prefix,
        leaseTtlSeconds: TTL,
      },
    );
    await using b = await startFleetMember(
      etcd.endpoints,
      'n-b',
      [0, 1].map((i) => fleetPlugin('n-b', i)),
      {
        prefix,
        leaseTtlSeconds: TTL,
      },
    );
    await waitFor('4 plugins', () => reader.plugins().length === 4);
    const mark = log.events.length;

    const leader = await etcd.leader();
    const follower = etcd.members.find((m) => m !== leader);
    assert.ok(follower);
    await follower.kill('SIGKILL');
    a.registry.registerPlugin(fleetPlugin('n-a', 2));
    await waitFor('the change despite a dead follower', () => reader.plugins({ node: 'n-a' }).length === 3);
    await follower.start();

    const leader2 = await etcd.leader();
    await leader2.kill('SIGKILL');
    b.registry.registerPlugin(fleetPlugin('n-b', 2));
    await waitFor('the change after the leader died', () => reader.plugins({ node: 'n-b' }).length === 3, {
      timeoutMs: 30_000,
    });
    // Longer than a TTL with the old leader gone: nothing may expire.
    await new Promise((resolve) => setTimeout(resolve, TTL * 1000 + 1000));
    await leader2.start();
    await checkClusterInvariants({ client: admin, reader, events: log.events, root: prefix });
    assert.deepEqual(
      losses(log.events.slice(mark)).map((e) => `${e.type}:${'plugin' in e ? e.plugin.key : ''}`),
      [
        `plugin-added:${reader.plugins({ node: 'n-a', name: 'csi-2.example.com' })[0]?.key}`,
        `plugin-added:${reader.plugins({ node: 'n-b', name: 'csi-2.example.com' })[0]?.key}`,
      ],
    );
    assert.equal(a.writer.leaseState, 'held');
    assert.equal(b.writer.leaseState, 'held');
  });

  test('a partitioned daemon: its entries expire on the majority side and come back after the heal; a cut-off reader goes stale', async () => {
    const prefix = nextRoot();
    const first = etcd.members[0];
    assert.ok(first);
    const proxy = await startPausableProxy({ host: '127.0.0.1', port: Number(new URL(first.endpoint).port) });
    try {
      await using reader = await startFleetReader(etcd.endpoints, { prefix, staleAfterMs: 30_000 });
      const log = recordClusterEvents(reader);
      await using cutReader = await startFleetReader([proxy.endpoint], { prefix, staleAfterMs: 1_500 });
      const cutLog = recordClusterEvents(cutReader);
      await using island = await startFleetMember(
        [proxy.endpoint],
        'island',
        [0, 1].map((i) => fleetPlugin('island', i)),
        {
          prefix,
          leaseTtlSeconds: TTL,
        },
      );
      await using mainland = await startFleetMember(
        etcd.endpoints,
        'mainland',
        [fleetPlugin('mainland', 0)],
        {
          prefix,
          leaseTtlSeconds: TTL,
        },
      );
      await waitFor('3 plugins', () => reader.plugins().length === 3 && cutReader.plugins().length === 3);
      const cutAt = Date.now();
      proxy.partition();
      await waitFor('the island expired on the majority side', () => reader.nodes().length === 1, {
        timeoutMs: 30_000,
      });
      const expiredAfter = Date.now() - cutAt;
      assert.ok(expiredAfter >= (TTL - 2) * 1000, `expired ${expiredAfter} ms after the cut`);
      await waitFor('the cut-off reader marked stale', () => cutReader.status.stale);
      assert.ok(cutLog.events.some((e) => e.type === 'stale'));
      // The cut-off reader keeps its last data.
      assert.equal(
        cutReader.plugins().length,
        3,
        JSON.stringify(cutLog.events.map((e) => [e.type, e.revision, 'reason' in e ? e.reason : ''])),
      );
      assert.equal(reader.plugins({ node: 'mainland' }).length, 1);

      proxy.heal();
      await waitFor('the island republished', () => reader.plugins({ node: 'island' }).length === 2, {
        timeoutMs: 30_000,
      });
      await waitFor('island in sync', () => island.writer.inSync, { timeoutMs: 30_000 });
      await waitFor(
        'the cut-off reader fresh again',
        () => !cutReader.status.stale && cutReader.plugins().length === 3,
        {
          timeoutMs: 30_000,
        },
      );
      await checkClusterInvariants({ client: admin, reader, events: log.events, root: prefix });
      await checkClusterInvariants({ client: admin, reader: cutReader, events: cutLog.events, root: prefix });
      assert.equal(mainland.writer.leaseState, 'held');
    } finally {
      await proxy.close();
    }
  });

  test('quorum loss shorter than the TTL deletes nothing', async () => {
    const prefix = nextRoot();
    await using reader = await startFleetReader(etcd.endpoints, { prefix, staleAfterMs: 30_000 });
    const log = recordClusterEvents(reader);
    await using a = await startFleetMember(
      etcd.endpoints,
      'q-a',
      [0, 1].map((i) => fleetPlugin('q-a', i)),
      {
        prefix,
        leaseTtlSeconds: TTL,
      },
    );
    await waitFor('2 plugins', () => reader.plugins().length === 2);
    const mark = log.events.length;
    const [m1, m2] = etcd.members;
    assert.ok(m1 && m2);
    await Promise.all([m1.kill('SIGKILL'), m2.kill('SIGKILL')]);
    await Promise.all([m1.start(), m2.start()]);
    // Past a whole TTL after the quorum is back: renewals must have kept the lease.
    await new Promise((resolve) => setTimeout(resolve, TTL * 1000 + 1000));
    a.registry.registerPlugin(fleetPlugin('q-a', 2));
    await waitFor('a change after the outage', () => reader.plugins().length === 3, { timeoutMs: 30_000 });
    await checkClusterInvariants({ client: admin, reader, events: log.events, root: prefix });
    assert.deepEqual(
      log.events
        .slice(mark)
        .filter((e) => e.type.endsWith('-removed'))
        .map((e) => e.type),
      [],
    );
    assert.equal(a.writer.leaseState, 'held');
  });

  test('a rolling restart of all daemons produces no flap', async () => {
    const prefix = nextRoot();
    await using reader = await startFleetReader(etcd.endpoints, { prefix, staleAfterMs: 30_000 });
    const log = recordClusterEvents(reader);
    const names = ['r-a', 'r-b', 'r-c'];
    const configOf = (node: string) => ({
      endpoints: etcd.endpoints,
      nodeName: node,
      instance: `${node}-install`,
      prefix,
      ttlSeconds: TTL,
      plugins: [0, 1, 2].map((i) => fleetPlugin(node, i)),
    });
    const running = new Map<string, FleetProcess>();
    try {
      for (const node of names) running.set(node, spawnFleetProcess(fixture, configOf(node)));
      for (const daemon of running.values()) await daemon.waitLine('synced', (l) => l.synced === true);
      await waitFor('9 plugins', () => reader.plugins().length === 9);
      const mark = log.events.length;
      for (const node of names) {
        const old = running.get(node);
        assert.ok(old);
        old.child.kill('SIGUSR2'); // a planned restart: release, do not revoke
        await old.exited;
        const fresh = spawnFleetProcess(fixture, configOf(node));
        running.set(node, fresh);
        await fresh.waitLine('synced', (l) => l.synced === true);
      }
      // Past the released leases' TTL: nothing may expire either.
      await new Promise((resolve) => setTimeout(resolve, TTL * 1000 + 1000));
      await checkClusterInvariants({ client: admin, reader, events: log.events, root: prefix });
      const since = log.events.slice(mark);
      assert.deepEqual(losses(since), [], 'no plugin or node left or reappeared');
      assert.ok(!since.some((e) => e.type === 'plugin-updated'), 'plugin values did not change');
      assert.equal(
        since.filter((e) => e.type === 'node-updated').length,
        3,
        'each node key names its new lease once',
      );
    } finally {
      for (const daemon of running.values()) await stopChild(daemon.child, 'SIGKILL');
    }
  });
});
