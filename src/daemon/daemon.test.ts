import assert from 'node:assert/strict';
import { lstatSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { createServer as createNetServer, type Socket } from 'node:net';
import { describe, it } from 'node:test';
import { isBerthError, silentLogger } from '../common/index.js';
import { createExamplePlugin } from '../registration/index.js';
import { startCsiTestDriver, startDevicePluginStub } from '../testing/harness/index.js';
import { createStaleSocket, createTempDir, waitFor } from '../testing/index.js';
import { resolveDaemonConfig } from './config/config.js';
import { createDaemon } from './daemon.js';

function get(socketPath: string, path: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ socketPath, path }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
    });
    req.on('error', reject);
    req.end();
  });
}

function configFor(dataDir: string, file: Parameters<typeof resolveDaemonConfig>[0] = {}) {
  return resolveDaemonConfig(file, { dataDir }, { env: {} });
}

describe('daemon', () => {
  it('starts on an empty data directory, is ready, and stops idempotently', async (t) => {
    const dir = createTempDir();
    t.after(() => dir.remove());
    const config = configFor(dir.path);
    const daemon = createDaemon(config, { logger: silentLogger });
    t.after(() => daemon.stop());
    await daemon.start();
    assert.equal(daemon.state, 'running');
    assert.equal(daemon.ready, true);
    assert.deepEqual(daemon.apiAddress, { socketPath: config.apiSocketPath });
    assert.equal(lstatSync(config.apiSocketPath).mode & 0o777, 0o600, 'API socket is owner-only');
    assert.equal((await get(config.apiSocketPath, '/readyz')).status, 200);
    const status = JSON.parse((await get(config.apiSocketPath, '/v1/status')).text);
    assert.equal(status.ready, true);
    assert.equal(status.pluginsDir, config.pluginsDir);
    assert.equal(status.storage.corruption, null);

    await Promise.all([daemon.stop(), daemon.stop()]);
    assert.equal(daemon.state, 'stopped');
    assert.throws(() => lstatSync(config.apiSocketPath), /ENOENT/, 'the socket is gone after stop');
    await daemon[Symbol.asyncDispose]();
  });

  it('gives up a start that a stop overtakes, leaving nothing open', async (t) => {
    const dir = createTempDir();
    t.after(() => dir.remove());
    const config = configFor(dir.path);
    const daemon = createDaemon(config, { logger: silentLogger });
    const starting = daemon.start();
    await daemon.stop();
    await assert.rejects(starting, (err) => isBerthError(err, 'BERTH_SHUT_DOWN'));
    assert.equal(daemon.state, 'stopped');
    assert.throws(() => lstatSync(config.apiSocketPath), /ENOENT/);
    // Nor the plugins directory's registrar lock: a new daemon takes the directory.
    const next = createDaemon(config, { logger: silentLogger });
    t.after(() => next.stop());
    await next.start();
    assert.equal(next.state, 'running');
    assert.equal(next.ready, true);
  });

  it('replaces a stale API socket and refuses to run beside a live daemon', async (t) => {
    const dir = createTempDir();
    t.after(() => dir.remove());
    const config = configFor(dir.path);
    await createStaleSocket(config.apiSocketPath);
    const first = createDaemon(config, { logger: silentLogger });
    t.after(() => first.stop());
    await first.start();

    const second = createDaemon(config, { logger: silentLogger });
    await assert.rejects(
      second.start(),
      (err) =>
        isBerthError(err, 'BERTH_DAEMON_RUNNING') &&
        err.message.includes(config.apiSocketPath) &&
        err.message.includes('--data-dir'),
    );
    assert.equal(second.state, 'stopped');
    assert.equal((await get(config.apiSocketPath, '/healthz')).status, 200, 'the first daemon is untouched');
  });

  it('reports a corrupt state database, sets it aside and starts empty', async (t) => {
    const dir = createTempDir();
    t.after(() => dir.remove());
    const config = configFor(dir.path);
    writeFileSync(config.statePath, 'this is not a SQLite database, not even close'.repeat(200));
    const daemon = createDaemon(config, { logger: silentLogger });
    t.after(() => daemon.stop());
    await daemon.start();
    const status = JSON.parse((await get(config.apiSocketPath, '/v1/status')).text);
    assert.equal(status.storage.corruption.error.code, 'BERTH_STORAGE_CORRUPT');
    assert.match(status.storage.corruption.movedTo, /state\.db\.corrupt-/);
    const metrics = (await get(config.apiSocketPath, '/metrics')).text;
    assert.match(metrics, /berth_registry_events_total\{type="storage-error"\} 1/);
    assert.equal((await get(config.apiSocketPath, '/readyz')).status, 200);
  });

  it('registers plugins of a configured type and keeps the registry across a restart', async (t) => {
    const dir = createTempDir();
    t.after(() => dir.remove());
    const config = configFor(dir.path, { handlers: [{ type: 'example.com/gpu', versions: ['v2'] }] });
    const plugin = createExamplePlugin({
      socketPath: dir.join('plugins_registry', 'gpu.sock'),
      name: 'gpu',
      type: 'example.com/gpu',
      versions: ['v1', 'v2'],
    });
    const first = createDaemon(config, { logger: silentLogger });
    t.after(() => first.stop());
    await first.start();
    await plugin.start();
    t.after(() => plugin.stop());
    assert.deepEqual(await plugin.nextStatus(), { pluginRegistered: true, error: '' });
    const client = await first.registry.dispensePlugin('example.com/gpu', 'gpu');
    assert.equal(
      typeof (client as { getChannel?: unknown }).getChannel,
      'function',
      'a gRPC client for the plugin',
    );
    await first.stop();

    const second = createDaemon(config, { logger: silentLogger });
    t.after(() => second.stop());
    await second.start();
    const listed = JSON.parse((await get(config.apiSocketPath, '/v1/plugins?type=example.com%2Fgpu')).text);
    assert.deepEqual(
      listed.plugins.map((p: { name: string; instances: number }) => [p.name, p.instances]),
      [['gpu', 1]],
      'restored and confirmed, not duplicated',
    );
    await second.stop();

    // The plugin leaves while berth is down: the restored instance is dropped at start.
    await plugin.stop();
    const third = createDaemon(config, { logger: silentLogger });
    t.after(() => third.stop());
    await third.start();
    const after = JSON.parse((await get(config.apiSocketPath, '/v1/plugins')).text);
    assert.deepEqual(after.plugins, []);
    await waitFor(
      'no sockets left',
      async () => JSON.parse((await get(config.apiSocketPath, '/v1/sockets')).text).sockets.length === 0,
    );
  });

  it('answers alive-but-not-ready while it starts, then ready', async (t) => {
    // Start is held deterministically: a restored plugin's socket accepts
    // connections but never speaks gRPC, so its re-verification dial waits
    // (timeouts.dial) and readiness waits for it.
    const dir = createTempDir();
    t.after(() => dir.remove());
    const config = configFor(dir.path, {
      handlers: [{ type: 'example.com/gpu', versions: ['v1'] }],
      timeouts: { dial: 600_000 },
    });
    const socketPath = dir.join('plugins_registry', 'gpu.sock');
    const plugin = createExamplePlugin({
      socketPath,
      name: 'gpu',
      type: 'example.com/gpu',
      versions: ['v1'],
    });
    const first = createDaemon(config, { logger: silentLogger });
    t.after(() => first.stop());
    await first.start();
    await plugin.start();
    assert.deepEqual(await plugin.nextStatus(), { pluginRegistered: true, error: '' });
    await first.stop();
    await plugin.stop();

    const connections: Socket[] = [];
    const wedged = createNetServer((conn) => {
      connections.push(conn); // accepted, never answered
      conn.on('error', () => {});
    });
    await new Promise<void>((resolve) => wedged.listen(socketPath, resolve));
    t.after(() => new Promise((resolve) => wedged.close(resolve)));
    const second = createDaemon(config, { logger: silentLogger });
    t.after(() => second.stop());
    const starting = second.start();
    await waitFor(
      'the API socket to answer',
      async () => (await get(config.apiSocketPath, '/healthz')).status === 200,
    );
    assert.equal(second.state, 'starting');
    const notReady = await get(config.apiSocketPath, '/readyz');
    assert.equal(notReady.status, 503);
    assert.equal(JSON.parse(notReady.text).error.code, 'BERTH_NOT_READY');
    assert.equal((await get(config.apiSocketPath, '/v1/plugins')).status, 503, 'no half-started answers');

    // The wedged listener goes away: its dial fails fast, the restored instance is dropped, berth is ready.
    for (const conn of connections) conn.destroy();
    await new Promise((resolve) => wedged.close(resolve));
    await starting;
    assert.equal((await get(config.apiSocketPath, '/readyz')).status, 200);
    assert.deepEqual(JSON.parse((await get(config.apiSocketPath, '/v1/plugins')).text).plugins, []);
  });

  it('registers kubelet-style plugins with the built-in handlers, as the kubelet would', async (t) => {
    // Shaped like the real thing: node-driver-registrar for a CSI driver (CSI
    // version, endpoint = the driver's own socket elsewhere), a device plugin
    // (resource name, v1beta1), a DRA driver (gRPC service names).
    const dir = createTempDir();
    t.after(() => dir.remove());
    const config = configFor(dir.path);
    const daemon = createDaemon(config, { logger: silentLogger });
    t.after(() => daemon.stop());
    await daemon.start();
    // berth dials a device plugin's endpoint (GetDevicePluginOptions, ListAndWatch), so it needs a real one.
    const gpuPlugin = await startDevicePluginStub({
      socketPath: dir.join('gpu-plugin.sock'),
      devices: [{ id: 'g0' }],
    });
    t.after(() => gpuPlugin.stop());
    // The CSI handler asks the driver behind the endpoint for its node info, so one must serve there.
    const csiDriver = await startCsiTestDriver(dir.join('csi-driver.sock'), {
      name: 'csi.example.com',
      nodeId: 'node-1',
    });
    t.after(() => csiDriver.stop());
    const plugins = [
      {
        file: 'csi.sock',
        type: 'CSIPlugin',
        name: 'csi.example.com',
        endpoint: csiDriver.socketPath,
        versions: ['1.0.0'],
      },
      {
        file: 'gpu.sock',
        type: 'DevicePlugin',
        name: 'example.com/gpu',
        endpoint: gpuPlugin.socketPath,
        versions: ['v1beta1'],
      },
      {
        file: 'dra.sock',
        type: 'DRAPlugin',
        name: 'dra.example.com',
        endpoint: '',
        versions: ['v1beta1.DRAPlugin', 'v1.DRAPlugin'],
      },
      { file: 'old-csi.sock', type: 'CSIPlugin', name: 'old.example.com', endpoint: '', versions: ['0.3.0'] },
    ];
    const servers = plugins.map((p) =>
      createExamplePlugin({
        socketPath: dir.join('plugins_registry', p.file),
        name: p.name,
        type: p.type,
        endpoint: p.endpoint,
        versions: p.versions,
      }),
    );
    for (const server of servers) {
      t.after(() => server.stop());
      await server.start();
    }
    const [csi, gpu, dra, oldCsi] = await Promise.all(servers.map((s) => s.nextStatus()));
    assert.deepEqual(csi, { pluginRegistered: true, error: '' });
    assert.deepEqual(gpu, { pluginRegistered: true, error: '' });
    assert.deepEqual(dra, { pluginRegistered: true, error: '' });
    assert.equal(oldCsi?.pluginRegistered, false, 'a CSI driver of major version 0 is refused');
    assert.match(oldCsi?.error ?? '', /RegisterPlugin error -- plugin validation failed with err: .*0\.3\.0/);

    const listed = JSON.parse((await get(config.apiSocketPath, '/v1/plugins')).text).plugins as Array<{
      type: string;
      name: string;
      endpoint: string;
    }>;
    assert.deepEqual(
      listed.map((p) => [p.type, p.name, p.endpoint]),
      [
        ['CSIPlugin', 'csi.example.com', csiDriver.socketPath],
        ['DevicePlugin', 'example.com/gpu', gpuPlugin.socketPath],
        ['DRAPlugin', 'dra.example.com', dir.join('plugins_registry', 'dra.sock')],
      ],
    );
  });
});
