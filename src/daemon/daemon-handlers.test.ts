/**
 * The built-in CSI and DRA handlers inside a running daemon: plugins register
 * through real registration sockets, the handlers talk to real driver
 * sockets, and what they learn shows on the HTTP API (and on the registry
 * instance as facts).
 */
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { describe, it } from 'node:test';
import { silentLogger } from '../common/index.js';
import { createExamplePlugin } from '../registration/index.js';
import { startCsiTestDriver, startDraTestDriver } from '../testing/harness/index.js';
import { createTempDir, waitFor } from '../testing/index.js';
import { parseConfigDocument, resolveDaemonConfig } from './config/config.js';
import { createDaemon } from './daemon.js';

function call(
  socketPath: string,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; json: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const headers: Record<string, string> =
      payload === undefined ? {} : { 'content-type': 'application/json' };
    const req = request({ socketPath, path, method, headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, json: JSON.parse(text) }));
    });
    req.on('error', reject);
    req.end(payload);
  });
}

/** Reads /v1/events until an event of `type` arrives (or the deadline passes). */
function nextEvent(socketPath: string, type: string, timeoutMs = 30_000): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    const req = request({ socketPath, path: '/v1/events' }, (res) => {
      let buffered = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        buffered += chunk;
        for (const block of buffered.split('\n\n').slice(0, -1)) {
          const data = block.split('\n').find((l) => l.startsWith('data: '));
          const event = data === undefined ? undefined : JSON.parse(data.slice(6));
          if (event?.type === type) {
            clearTimeout(timer);
            req.destroy();
            resolve(event);
            return;
          }
        }
        buffered = buffered.slice(buffered.lastIndexOf('\n\n') + 2);
      });
    });
    const timer = setTimeout(() => {
      req.destroy();
      reject(new Error(`no ${type} event within ${timeoutMs} ms`));
    }, timeoutMs);
    req.on('error', () => {});
    req.end();
  });
}

describe('daemon with the built-in CSI and DRA handlers', () => {
  it('CSI: asks the driver, shows it on /v1/csi/drivers and as facts, retries a failed NodeGetInfo, drops it on deregistration', async (t) => {
    const dir = createTempDir();
    t.after(() => dir.remove());
    const config = resolveDaemonConfig({}, { dataDir: dir.path }, { env: {} });
    const daemon = createDaemon(config, { logger: silentLogger });
    t.after(() => daemon.stop());
    await daemon.start();
    const api = config.apiSocketPath;

    const driver = await startCsiTestDriver(dir.join('csi-driver.sock'), {
      name: 'csi.example.com',
      nodeId: 'node-7',
      vendorVersion: '2.1.0',
      maxVolumesPerNode: 32,
      topology: { 'topology.example.com/zone': 'zone-a' },
      capabilities: ['STAGE_UNSTAGE_VOLUME'],
      failNodeGetInfo: 'still starting',
    });
    t.after(() => driver.stop());
    const registrar = createExamplePlugin({
      socketPath: dir.join('plugins_registry', 'csi.example.com-reg.sock'),
      name: 'csi.example.com',
      type: 'CSIPlugin',
      endpoint: driver.socketPath,
      versions: ['1.0.0'],
    });
    t.after(() => registrar.stop());
    await registrar.start();

    const refused = await registrar.nextStatus();
    assert.equal(refused.pluginRegistered, false);
    assert.equal(
      refused.error,
      'RegisterPlugin error -- plugin registration failed with err: kubernetes.io/csi: registrationHandler.RegisterPlugin failed at CSI.NodeGetInfo: rpc error: code = Unavailable desc = still starting',
    );
    assert.deepEqual((await call(api, 'GET', '/v1/csi/drivers')).json, { drivers: [] });
    // The plugin manager retries with backoff; the driver is ready by then.
    delete driver.behaviour.failNodeGetInfo;
    assert.deepEqual(await registrar.nextStatus(), { pluginRegistered: true, error: '' });

    const { json } = await call(api, 'GET', '/v1/csi/drivers');
    const drivers = json.drivers as Array<Record<string, unknown>>;
    assert.equal(drivers.length, 1);
    assert.deepEqual(
      {
        name: drivers[0]?.name,
        nodeId: drivers[0]?.nodeId,
        maxVolumesPerNode: drivers[0]?.maxVolumesPerNode,
        topologyKeys: drivers[0]?.topologyKeys,
        vendorVersion: drivers[0]?.vendorVersion,
        capabilities: drivers[0]?.capabilities,
      },
      {
        name: 'csi.example.com',
        nodeId: 'node-7',
        maxVolumesPerNode: 32,
        topologyKeys: ['topology.example.com/zone'],
        vendorVersion: '2.1.0',
        capabilities: ['STAGE_UNSTAGE_VOLUME'],
      },
    );
    const plugin = (await call(api, 'GET', '/v1/plugins/CSIPlugin/csi.example.com')).json.plugin as {
      options: Record<string, string>;
    };
    assert.equal(plugin.options['csi.nodeId'], 'node-7');
    assert.equal(plugin.options['csi.maxVolumesPerNode'], '32');
    assert.equal(plugin.options['csi.vendorVersion'], '2.1.0');
    assert.deepEqual(JSON.parse(plugin.options['csi.accessibleTopology'] ?? ''), {
      'topology.example.com/zone': 'zone-a',
    });
    assert.deepEqual(JSON.parse(plugin.options['csi.capabilities'] ?? ''), ['STAGE_UNSTAGE_VOLUME']);
    // The registry persists them with the instance.
    assert.equal(
      daemon.registry.listInstances('CSIPlugin', 'csi.example.com')[0]?.options['csi.nodeId'],
      'node-7',
    );

    await registrar.stop();
    await waitFor('the driver to leave /v1/csi/drivers', async () => {
      const after = await call(api, 'GET', '/v1/csi/drivers');
      return (after.json.drivers as unknown[]).length === 0;
    });
  });

  it('DRA: lists instances, prepares claims on the chosen one, and reports a driver that stays unusable', async (t) => {
    const dir = createTempDir();
    t.after(() => dir.remove());
    const config = resolveDaemonConfig(
      parseConfigDocument({ handlerOptions: { DRAPlugin: { wipeDelay: '300ms' } } }, 'test config'),
      { dataDir: dir.path },
      { env: {} },
    );
    assert.deepEqual(config.handlerOptions, { DRAPlugin: { wipeDelayMs: 300 } });
    const daemon = createDaemon(config, { logger: silentLogger });
    t.after(() => daemon.stop());
    await daemon.start();
    const api = config.apiSocketPath;

    const driver = await startDraTestDriver(dir.join('dra.sock'), 'v1.DRAPlugin');
    t.after(() => driver.stop());
    const registrar = createExamplePlugin({
      socketPath: dir.join('plugins_registry', 'gpu.example.com-reg.sock'),
      name: 'gpu.example.com',
      type: 'DRAPlugin',
      endpoint: driver.socketPath,
      versions: ['v1.DRAPlugin', 'v1beta1.DRAPlugin'],
    });
    t.after(() => registrar.stop());
    await registrar.start();
    assert.deepEqual(await registrar.nextStatus(), { pluginRegistered: true, error: '' });

    const listed = await waitFor('the instance to connect', async () => {
      const { json } = await call(api, 'GET', '/v1/dra/drivers');
      const [entry] = json.drivers as Array<{ usable: boolean; chosen: unknown; instances: unknown[] }>;
      return entry?.usable ? entry : undefined;
    });
    assert.deepEqual(listed.chosen, { endpoint: driver.socketPath, service: 'v1.DRAPlugin' });
    assert.equal(listed.instances.length, 1);

    const claims = [{ namespace: 'default', uid: 'uid-1', name: 'gpu-claim' }];
    const prepared = await call(api, 'POST', '/v1/dra/drivers/gpu.example.com/prepare', { claims });
    assert.equal(prepared.status, 200);
    assert.equal(prepared.json.ok, true);
    assert.deepEqual((prepared.json.claims as Array<{ devices: unknown }>)[0]?.devices, [
      {
        requestNames: ['req-0'],
        poolName: 'pool-a',
        deviceName: 'dev-gpu-claim',
        cdiDeviceIds: ['example.com/device=gpu-claim'],
      },
    ]);
    const unprepared = await call(api, 'POST', '/v1/dra/drivers/gpu.example.com/unprepare', { claims });
    assert.equal(unprepared.json.ok, true);
    assert.deepEqual(driver.calls, ['prepare uid-1', 'unprepare uid-1']);

    const missing = await call(api, 'POST', '/v1/dra/drivers/nope.example.com/prepare', { claims });
    assert.equal(missing.status, 404);
    assert.deepEqual(missing.json, {
      error: { code: 'BERTH_PLUGIN_NOT_FOUND', message: 'DRA driver nope.example.com is not registered' },
    });
    const bad = await call(api, 'POST', '/v1/dra/drivers/gpu.example.com/prepare', { claims: 'x' });
    assert.equal(bad.status, 400);
    driver.behaviour = { failCall: 'boom' };
    const failed = await call(api, 'POST', '/v1/dra/drivers/gpu.example.com/prepare', { claims });
    assert.equal(failed.status, 502);
    assert.equal((failed.json.error as { code: string }).code, 'BERTH_PLUGIN_CALL_FAILED');

    // The driver dies but its registration socket stays: after the wipe delay berth says so.
    const unusable = nextEvent(api, 'driver-unusable');
    await driver.stop();
    const event = await unusable;
    assert.deepEqual(event.plugin, { type: 'DRAPlugin', name: 'gpu.example.com' });
    const after = (await call(api, 'GET', '/v1/dra/drivers')).json.drivers as Array<{ usable: boolean }>;
    assert.equal(after[0]?.usable, false);
  });
});
