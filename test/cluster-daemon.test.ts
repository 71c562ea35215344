/**
 * The cluster view inside real daemons: two daemons publish to one real etcd
 * and each serves the fleet on /v1/cluster/*; a daemon whose etcd is down
 * still starts and serves its own plugins; a daemon without `cluster:` says so.
 */
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { after, before, describe, test } from 'node:test';
import { silentLogger } from '../src/common/index.js';
import { createDaemon, resolveDaemonConfig } from '../src/daemon/index.js';
import { createExamplePlugin } from '../src/registration/index.js';
import { BERTH_CLI, type EtcdServer, runModule, startEtcdServer } from '../src/testing/harness/index.js';
import { createTempDir, waitFor } from '../src/testing/index.js';

const MAIN = BERTH_CLI;

/** Runs the real `berth` CLI to completion. */
const cli = (args: string[]) => runModule(MAIN, args);

function get(socketPath: string, path: string): Promise<{ status: number; body: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const req = request({ socketPath, path }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => {
        try {
          resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) as Record<string, unknown> });
        } catch {
          resolve({ status: res.statusCode ?? 0, body: { text } });
        }
      });
    });
    req.on('error', reject);
    req.end();
  });
}

/** Reads server-sent events until `until` matches one; returns every event seen. */
function readEvents(socketPath: string, path: string, until: (event: string, data: unknown) => boolean) {
  const seen: Array<{ event: string; data: unknown; id: number }> = [];
  let opened: () => void = () => {};
  const open = new Promise<void>((resolve) => {
    opened = resolve;
  });
  const done = new Promise<typeof seen>((resolve, reject) => {
    const req = request({ socketPath, path }, (res) => {
      opened();
      let buffer = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        buffer += chunk;
        let cut = buffer.indexOf('\n\n');
        while (cut >= 0) {
          const block = buffer.slice(0, cut);
          buffer = buffer.slice(cut + 2);
          cut = buffer.indexOf('\n\n');
          const event = /^event: (.*)$/m.exec(block)?.[1];
          const data = /^data: (.*)$/m.exec(block)?.[1];
          if (event === undefined || data === undefined) continue;
          const parsed: unknown = JSON.parse(data);
          seen.push({ event, data: parsed, id: Number(/^id: (\d+)$/m.exec(block)?.[1]) });
          if (until(event, parsed)) {
            req.destroy();
            resolve(seen);
          }
        }
      });
    });
    req.on('error', (err) => {
      if (!req.destroyed) reject(err);
    });
    req.end();
  });
  return { open, done };
}

let etcd: EtcdServer;
before(async () => {
  etcd = await startEtcdServer();
});
after(async () => {
  await etcd?.stop();
});

describe('cluster view in the daemon', () => {
  test('two daemons publish their plugins and each serves the fleet; stopping one removes it at once', async (t) => {
    const dirs = [createTempDir(), createTempDir()];
    t.after(() => {
      for (const dir of dirs) dir.remove();
    });
    const prefix = `/d-${process.pid}/`;
    const daemons = dirs.map((dir, i) =>
      createDaemon(
        resolveDaemonConfig(
          {
            handlers: [{ type: 'example.com/gpu', versions: ['v1'] }],
            cluster: { etcd: { endpoints: [etcd.endpoint] }, nodeName: `host-${i}`, prefix, leaseTtl: 3 },
          },
          { dataDir: dir.path },
          { env: {} },
        ),
        { logger: silentLogger },
      ),
    );
    const [a, b] = daemons;
    assert.ok(a && b);
    t.after(() => Promise.all(daemons.map((d) => d.stop())));
    await Promise.all(daemons.map((d) => d.start()));
    const plugin = createExamplePlugin({
      socketPath: dirs[0]?.join('plugins_registry', 'gpu.sock') ?? '',
      name: 'gpu',
      type: 'example.com/gpu',
      versions: ['v1'],
    });
    await plugin.start();
    t.after(() => plugin.stop());
    assert.deepEqual(await plugin.nextStatus(), { pluginRegistered: true, error: '' });

    const socketB = b.apiAddress.socketPath;
    const seen = await waitFor('daemon b sees the plugin of daemon a', async () => {
      const res = await get(socketB, '/v1/cluster/plugins?node=host-0&type=example.com/gpu');
      const plugins = res.body.plugins as Array<Record<string, unknown>> | undefined;
      return plugins?.length === 1 ? res.body : undefined;
    });
    const [entry] = seen.plugins as Array<{
      name: string;
      versions: string[];
      health: { state: string };
      endpoint: string;
    }>;
    assert.equal(entry?.name, 'gpu');
    assert.deepEqual(entry?.versions, ['v1']);
    assert.equal(entry?.health.state, 'healthy');
    assert.match(entry?.endpoint ?? '', /gpu\.sock$/);
    assert.equal(seen.stale, false);
    const table = await cli(['cluster', 'plugins', '--api', socketB]);
    assert.equal(table.code, 0, table.stderr);
    assert.match(table.stdout, /host-0\s+example\.com\/gpu\s+gpu\s+v1\s+healthy/);

    const nodes = await get(socketB, '/v1/cluster/nodes');
    assert.equal(nodes.status, 200);
    assert.deepEqual(
      (nodes.body.nodes as Array<{ node: string; plugins: number }>).map((n) => [n.node, n.plugins]),
      [
        ['host-0', 1],
        ['host-1', 0],
      ],
    );
    assert.equal((nodes.body.self as { leaseState: string }).leaseState, 'held');
    const nodeTable = await cli(['cluster', 'nodes', '--api', socketB]);
    assert.equal(nodeTable.code, 0, nodeTable.stderr);
    assert.match(nodeTable.stdout, /host-0\s+1/);
    const metrics = await new Promise<string>((resolve, reject) => {
      const req = request({ socketPath: socketB, path: '/metrics' }, (res) => {
        let text = '';
        res.on('data', (c: Buffer) => (text += c.toString()));
        res.on('end', () => resolve(text));
      });
      req.on('error', reject);
      req.end();
    });
    assert.match(metrics, /berth_cluster_lease_state\{state="held"\} 1/);
    assert.match(metrics, /berth_cluster_view_stale 0/);
    assert.match(metrics, /berth_cluster_publish_latency_seconds_count \d+/);

    // The plugin goes away: b's event stream reports exactly that removal; then a stops (SIGTERM path).
    const stream = readEvents(socketB, '/v1/cluster/events', (event) => event === 'node-removed');
    await stream.open;
    await plugin.stop();
    await waitFor('the plugin gone from b', async () => {
      const res = await get(socketB, '/v1/cluster/plugins?node=host-0');
      return (res.body.plugins as unknown[] | undefined)?.length === 0;
    });
    const stoppedAt = Date.now();
    await a.stop();
    const events = await stream.done;
    assert.ok(Date.now() - stoppedAt < 5_000);
    assert.deepEqual(
      events.map((e) => e.event),
      ['plugin-removed', 'node-removed'],
    );
    // Cluster events are numbered like /v1/events, so a client can resume with Last-Event-ID.
    assert.ok(
      events.every((e, i) => Number.isInteger(e.id) && (i === 0 || e.id > (events[i - 1]?.id ?? 0))),
      JSON.stringify(events.map((e) => e.id)),
    );
  });

  test('a daemon whose etcd is down starts, serves its own plugins, and reports the view stale', async (t) => {
    const dir = createTempDir();
    t.after(() => dir.remove());
    const daemon = createDaemon(
      resolveDaemonConfig(
        // Port 9 on loopback: nothing listens there.
        {
          handlers: [{ type: 'example.com/p', versions: ['v1'] }],
          cluster: {
            etcd: { endpoints: ['http://127.0.0.1:9'] },
            nodeName: 'offline',
            leaseTtl: 2,
            probeInterval: 200,
          },
        },
        { dataDir: dir.path },
        { env: {} },
      ),
      { logger: silentLogger },
    );
    t.after(() => daemon.stop());
    await daemon.start();
    const plugin = createExamplePlugin({
      socketPath: dir.join('plugins_registry', 'p.sock'),
      name: 'p',
      type: 'example.com/p',
      versions: ['v1'],
    });
    await plugin.start();
    t.after(() => plugin.stop());
    assert.deepEqual(await plugin.nextStatus(), { pluginRegistered: true, error: '' });
    const local = await get(daemon.apiAddress.socketPath, '/v1/plugins');
    assert.equal((local.body.plugins as unknown[]).length, 1);
    await waitFor('the view marked stale', async () => {
      const res = await get(daemon.apiAddress.socketPath, '/v1/cluster/nodes');
      return res.body.stale === true ? res : undefined;
    });
    const nodes = await get(daemon.apiAddress.socketPath, '/v1/cluster/nodes');
    assert.notEqual((nodes.body.self as { leaseState: string }).leaseState, 'held');
  });

  test('without a cluster: section the routes say the view is not configured', async (t) => {
    const dir = createTempDir();
    t.after(() => dir.remove());
    const daemon = createDaemon(resolveDaemonConfig({}, { dataDir: dir.path }, { env: {} }), {
      logger: silentLogger,
    });
    t.after(() => daemon.stop());
    await daemon.start();
    const res = await get(daemon.apiAddress.socketPath, '/v1/cluster/plugins');
    assert.equal(res.status, 404);
    assert.equal((res.body.error as { code: string }).code, 'BERTH_CLUSTER_DISABLED');
  });
});
