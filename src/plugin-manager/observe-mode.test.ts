/**
 * Observe mode in process: real plugins (berth's example plugin on real unix
 * sockets, a real CSI driver over gRPC), the real CSI and device plugin
 * checks. Each handler's validation runs as a dry run whose verdict carries
 * the kubelet's text; no plugin is ever told anything.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync } from 'node:fs';
import { describe, it, type TestContext } from 'node:test';
import { createCsiHandler } from '../handlers/csi/index.js';
import { createDevicePluginHandler } from '../handlers/index.js';
import {
  createExamplePlugin,
  type ExamplePlugin,
  type RegistrationServerBehaviour,
} from '../registration/index.js';
import { recordingServices, startCsiTestDriver } from '../testing/harness/index.js';
import { createStaleSocket, createTempDir, waitFor } from '../testing/index.js';
import { createPluginManager } from './index.js';
import type { RegisteredPlugin, SocketStatus } from './types.js';

const CSI_NAME = 'csi.example.com';

async function observer(t: TestContext, options: { missingDir?: boolean } = {}) {
  const dir = createTempDir();
  const pluginsDir = dir.join('plugins');
  if (options.missingDir !== true) mkdirSync(pluginsDir);
  const registered: RegisteredPlugin[] = [];
  const manager = createPluginManager({
    pluginsDir,
    mode: 'observe',
    liveness: false,
    rescanIntervalMs: 100,
    // Short retries so a refused plugin is probed again quickly (the kubelet's would be 500 ms doubling).
    backoff: { initialMs: 50, maxMs: 200, factor: 2 },
    onEvent: (event) => {
      if (event.type === 'plugin-registered') registered.push(event.plugin);
    },
  });
  const csi = createCsiHandler(recordingServices({ dataDir: dir.path }));
  manager.addHandler('CSIPlugin', csi);
  manager.addHandler('DevicePlugin', createDevicePluginHandler());
  const plugins: ExamplePlugin[] = [];
  t.after(async () => {
    await manager.stop();
    await Promise.all(plugins.map((p) => p.stop()));
    await csi.stop();
    dir.remove();
  });
  await manager.start();
  const plugin = async (
    file: string,
    type: string,
    name: string,
    versions: string[],
    endpoint?: string,
    behaviour?: RegistrationServerBehaviour,
  ) => {
    const p = createExamplePlugin({
      socketPath: dir.join('plugins', file),
      type,
      name,
      versions,
      ...(endpoint === undefined ? {} : { endpoint }),
      ...(behaviour === undefined ? {} : { behaviour }),
    });
    plugins.push(p);
    await p.start();
    return p;
  };
  const socket = (file: string): SocketStatus | undefined =>
    manager.sockets().find((s) => s.socketPath === dir.join('plugins', file));
  const settled = (file: string) =>
    waitFor(`${file} observed`, () => {
      const s = socket(file);
      return s?.state === 'observed' && s.verdict !== undefined ? s : undefined;
    });
  return { dir, manager, csi, plugin, socket, settled, registered, plugins };
}

describe('observe mode', () => {
  it('reports duplicate names and unsupported versions with the kubelet texts, tells no plugin, changes no handler state', async (t) => {
    const o = await observer(t);
    const driverSocket = o.dir.join('csi-driver.sock');
    const driver = await startCsiTestDriver(driverSocket, { name: CSI_NAME, nodeId: 'node-1' });
    t.after(() => driver.stop());

    const first = await o.plugin('first.sock', 'CSIPlugin', CSI_NAME, ['1.0.0'], driverSocket);
    const accepted = await o.settled('first.sock');
    assert.deepEqual(accepted.verdict, { accepted: true });
    assert.deepEqual(accepted.plugin, { type: 'CSIPlugin', name: CSI_NAME });
    assert.equal(accepted.endpoint, driverSocket);
    assert.deepEqual(accepted.versions, ['1.0.0']);
    // Register made only read-only calls on the driver.
    assert.ok(driver.calls.includes('NodeGetInfo'), driver.calls.join(','));
    for (const call of driver.calls)
      assert.match(call, /^(GetPluginInfo|Probe|NodeGetInfo|NodeGetCapabilities)$/);

    // The same name and version again: the kubelet's CSI handler refuses it.
    const second = await o.plugin('second.sock', 'CSIPlugin', CSI_NAME, ['1.0.0'], driverSocket);
    const duplicate = await o.settled('second.sock');
    assert.equal(duplicate.verdict?.accepted, false);
    assert.equal(
      duplicate.verdict?.error,
      `RegisterPlugin error -- plugin validation failed with err: validation failed for CSI Driver ${CSI_NAME} at endpoint ${driverSocket}: kubernetes.io/csi: ValidatePlugin for CSI driver "${CSI_NAME}" failed. Another driver with the same name is already registered with a higher supported version: "1.0.0"`,
    );
    assert.deepEqual(duplicate.plugin, { type: 'CSIPlugin', name: CSI_NAME });
    assert.equal(duplicate.endpoint, driverSocket);

    // Versions the kubelet does not support: CSI 0.x, and a device plugin without v1beta1.
    const old = await o.plugin('old.sock', 'CSIPlugin', 'csi.old.com', ['0.3.0'], driverSocket);
    const unsupported = await o.settled('old.sock');
    assert.equal(unsupported.verdict?.accepted, false);
    assert.match(
      unsupported.verdict?.error ?? '',
      /^RegisterPlugin error -- plugin validation failed with err: validation failed for CSI Driver csi\.old\.com at endpoint .*: kubernetes\.io\/csi: ValidatePlugin for CSI driver "csi\.old\.com" failed\. None of the versions specified \["0\.3\.0"\] are supported\./,
    );
    const device = await o.plugin('gpu.sock', 'DevicePlugin', 'vendor.com/gpu', ['v1alpha']);
    const wrongApi = await o.settled('gpu.sock');
    assert.equal(
      wrongApi.verdict?.error,
      'RegisterPlugin error -- plugin validation failed with err: manager version, v1beta1, is not among plugin supported versions [v1alpha]',
    );
    // A type the node has no handler for.
    const odd = await o.plugin('odd.sock', 'x.example.com/odd', 'odd', ['v1']);
    const noHandler = await o.settled('odd.sock');
    assert.equal(
      noHandler.verdict?.error,
      `RegisterPlugin error -- no handler registered for plugin type: x.example.com/odd at socket ${o.dir.join('plugins', 'odd.sock')}`,
    );

    // Refused plugins are probed again on the backoff, and still nobody is told anything.
    await waitFor('the duplicate probed again', () => (o.socket('second.sock')?.attempts ?? 0) >= 3);
    for (const p of [first, second, old, device, odd]) {
      assert.deepEqual(p.statuses, [], `${p.name} at ${p.socketPath} got no NotifyRegistrationStatus`);
    }
    // The dry runs left the handler as it was: one driver, the accepted instance's.
    assert.deepEqual(
      o.csi.drivers().map((d) => [d.name, d.socketPath]),
      [[CSI_NAME, first.socketPath]],
    );
    assert.deepEqual(
      o.registered.map((p) => [p.name, p.observed]),
      [[CSI_NAME, true]],
    );
  });

  it('marks a file with no listener stale and a silent listener unreachable', async (t) => {
    const o = await observer(t);
    const stalePath = o.dir.join('plugins', 'stale.sock');
    await createStaleSocket(stalePath);
    const stale = await waitFor('stale', () => {
      const s = o.socket('stale.sock');
      return s?.state === 'stale' ? s : undefined;
    });
    assert.match(stale.lastError?.message ?? '', /ECONNREFUSED/);
    assert.equal(stale.verdict, undefined);

    // A plugin that accepts the connection but never answers GetInfo: the kubelet's "never answers".
    const silent = await o.plugin(
      'silent.sock',
      'DevicePlugin',
      'vendor.com/silent',
      ['v1beta1'],
      undefined,
      {
        hangGetInfo: true,
      },
    );
    const unreachable = await waitFor('unreachable', () => {
      const s = o.socket('silent.sock');
      return s?.state === 'unreachable' ? s : undefined;
    });
    assert.equal(unreachable.lastError?.code, 'BERTH_GET_INFO_FAILED');
    assert.match(unreachable.lastError?.message ?? '', /failed to get plugin info using RPC GetInfo/);
    assert.deepEqual(silent.statuses, []);
  });

  it('does not create a missing directory, and observes it once its owner has', async (t) => {
    const o = await observer(t, { missingDir: true });
    assert.equal(existsSync(o.dir.join('plugins')), false, 'an observer creates nothing');
    mkdirSync(o.dir.join('plugins'));
    const late = await o.plugin('late.sock', 'DevicePlugin', 'vendor.com/late', ['v1beta1']);
    const seen = await o.settled('late.sock');
    assert.deepEqual(seen.verdict, { accepted: true });
    assert.deepEqual(late.statuses, []);
  });
});
