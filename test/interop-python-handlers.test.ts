/**
 * berth's CSI and DRA handlers against drivers on another gRPC stack
 * (Debian's C-core grpcio, messages encoded by google.protobuf from
 * descriptors written in the fixture): a CSI driver behind a registration
 * socket, and a DRA driver serving v1.DRAPlugin that is replaced by a second
 * instance (a seamless upgrade) without the driver ever becoming unusable.
 */
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { describe, it } from 'node:test';
import { type PluginEvent, silentLogger } from '../src/common/index.js';
import { createDaemon, resolveDaemonConfig } from '../src/daemon/index.js';
import { createTempDir, type TempDir, waitFor } from '../src/testing/index.js';
import { type PythonPlugin, requirePythonGrpc, spawnPythonScript } from './fixtures/python-plugin.js';

function call(socketPath: string, method: string, path: string, body?: unknown) {
  return new Promise<{ status: number; json: Record<string, unknown> }>((resolve, reject) => {
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

type After = { after(fn: () => unknown): void };

function spawnDriver(t: After, dir: TempDir, args: { kind: 'csi' | 'dra'; name: string; instance: string }) {
  const driver = spawnPythonScript('python-driver.py', [
    '--kind',
    args.kind,
    '--socket',
    dir.join('plugins_registry', `${args.name}-${args.instance}.sock`),
    '--endpoint',
    dir.join(`${args.kind}-${args.instance}.sock`),
    '--name',
    args.name,
    '--instance',
    args.instance,
  ]);
  t.after(() => {
    if (driver.child.exitCode === null && driver.child.signalCode === null) driver.child.kill('SIGKILL');
  });
  return { driver, endpoint: dir.join(`${args.kind}-${args.instance}.sock`) };
}

/** The next event of a kind, skipping `call` lines (which the test checks separately). */
async function nextOf(driver: PythonPlugin, event: string) {
  while (true) {
    const next = await driver.next(event);
    if (next.event === event) return next;
  }
}

async function startDaemon(t: After, dir: TempDir) {
  const config = resolveDaemonConfig({}, { dataDir: dir.path }, { env: {} });
  const daemon = createDaemon(config, { logger: silentLogger });
  t.after(() => daemon.stop());
  await daemon.start();
  return { daemon, api: config.apiSocketPath };
}

describe('interop: Python grpcio drivers and the built-in handlers', { timeout: 120_000 }, () => {
  it('a CSI driver behind a registration socket: berth reads its node info and capabilities', async (t) => {
    if (!requirePythonGrpc(t)) return;
    const dir = createTempDir();
    t.after(() => dir.remove());
    const { api } = await startDaemon(t, dir);
    const { driver, endpoint } = spawnDriver(t, dir, {
      kind: 'csi',
      name: 'py.csi.example.com',
      instance: 'a',
    });
    assert.deepEqual(await driver.next('serving'), { event: 'serving' });
    const calls: string[] = [];
    while (true) {
      const next = await driver.next('notified');
      if (next.event === 'call') calls.push(next.method ?? '');
      else {
        assert.deepEqual(next, { event: 'notified', registered: true, error: '' }, driver.stderr());
        break;
      }
    }
    assert.deepEqual(calls.sort(), ['GetPluginInfo', 'NodeGetCapabilities', 'NodeGetInfo', 'Probe']);
    const [entry] = (await call(api, 'GET', '/v1/csi/drivers')).json.drivers as Array<
      Record<string, unknown>
    >;
    assert.deepEqual(
      { ...entry, registeredAt: null },
      {
        name: 'py.csi.example.com',
        nodeId: 'py-node-1',
        // 5e9 does not fit CSINode's int32 allocatable.count: capped as the kubelet caps it.
        maxVolumesPerNode: 2147483647,
        topologyKeys: ['topology.example.com/node', 'topology.example.com/zone'],
        accessibleTopology: {
          'topology.example.com/zone': 'py-zone',
          'topology.example.com/node': 'py-node',
        },
        vendorVersion: '9.8.7',
        capabilities: ['STAGE_UNSTAGE_VOLUME', 'EXPAND_VOLUME'],
        ready: true,
        version: '1.0.0',
        endpoint,
        socketPath: dir.join('plugins_registry', 'py.csi.example.com-a.sock'),
        registeredAt: null,
        warnings: [],
      },
    );
    driver.child.kill('SIGTERM');
    await waitFor('the driver to leave /v1/csi/drivers', async () => {
      const after = await call(api, 'GET', '/v1/csi/drivers');
      return (after.json.drivers as unknown[]).length === 0;
    });
  });

  it('a DRA driver on v1.DRAPlugin is replaced by a second instance without becoming unusable', async (t) => {
    if (!requirePythonGrpc(t)) return;
    const dir = createTempDir();
    t.after(() => dir.remove());
    const { daemon, api } = await startDaemon(t, dir);
    const events: PluginEvent[] = [];
    const abort = new AbortController();
    t.after(() => abort.abort());
    // The registry's own stream is enough for registered/deregistered; driver-unusable is checked on the API state.
    void (async () => {
      for await (const event of daemon.registry.subscribe('DRAPlugin', { signal: abort.signal }))
        events.push(event);
    })();

    const name = 'gpu.py.example.com';
    const claims = [{ namespace: 'default', uid: 'uid-1', name: 'claim-1' }];
    const prepareOn = async () => {
      const { status, json } = await call(api, 'POST', `/v1/dra/drivers/${name}/prepare`, { claims });
      assert.equal(status, 200, JSON.stringify(json));
      assert.equal(json.ok, true);
      return (json.claims as Array<{ devices: Array<{ deviceName: string }> }>)[0]?.devices[0]?.deviceName;
    };
    const driverState = async () =>
      (
        (await call(api, 'GET', '/v1/dra/drivers')).json.drivers as Array<{
          usable: boolean;
          unusableSince: string | null;
          chosen: { endpoint: string; service: string } | null;
          instances: Array<{ endpoint: string; connected: boolean }>;
        }>
      )[0];

    const a = spawnDriver(t, dir, { kind: 'dra', name, instance: 'a' });
    assert.deepEqual(await nextOf(a.driver, 'notified'), { event: 'notified', registered: true, error: '' });
    await waitFor('instance a connected', async () => (await driverState())?.usable === true);
    assert.equal(await prepareOn(), 'a-claim-1');

    // The upgrade: b starts beside a (its own socket names), connects, and is preferred as the newest.
    const b = spawnDriver(t, dir, { kind: 'dra', name, instance: 'b' });
    assert.deepEqual(await nextOf(b.driver, 'notified'), { event: 'notified', registered: true, error: '' });
    await waitFor('instance b connected and chosen', async () => {
      const state = await driverState();
      return state?.instances.length === 2 && state.chosen?.endpoint === b.endpoint;
    });
    assert.equal(await prepareOn(), 'b-claim-1');
    assert.equal((await driverState())?.chosen?.service, 'v1.DRAPlugin');

    // The old instance goes; the driver never stops being usable, so no driver-unusable is pending.
    a.driver.child.kill('SIGTERM');
    await waitFor('instance a gone', async () => (await driverState())?.instances.length === 1);
    const state = await driverState();
    assert.equal(state?.usable, true);
    assert.equal(state?.unusableSince, null, 'no wipe-delay clock is running');
    assert.equal(await prepareOn(), 'b-claim-1');
    const unprepared = await call(api, 'POST', `/v1/dra/drivers/${name}/unprepare`, { claims });
    assert.equal(unprepared.json.ok, true);
    assert.deepEqual(
      events.map((e) => e.type),
      ['registered', 'registered', 'deregistered'],
    );
  });
});
