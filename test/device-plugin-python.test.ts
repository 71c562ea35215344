/**
 * Interoperability of berth's device manager with a device plugin on another
 * gRPC stack (Debian's grpcio): ListAndWatch with devices turning unhealthy
 * and back, GetPreferredAllocation, Allocate and PreStartContainer, once
 * registered through the plugins directory (the real plugin manager) and once
 * through the legacy kubelet.sock.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createDeviceManagerDelegate, createDevicePluginManager } from 'berth/handlers/device-plugin';
import { type PluginEvent, silentLogger } from '../src/common/index.js';
import { createDevicePluginHandler } from '../src/handlers/index.js';
import { createPluginManager } from '../src/plugin-manager/index.js';
import { createTempDir, waitFor } from '../src/testing/index.js';
import { spawnPythonDevicePlugin } from './fixtures/python-device-plugin.js';
import { requirePythonGrpc } from './fixtures/python-plugin.js';

const RESOURCE = 'py.example.com/gpu';
const NUMA: Record<string, number> = { gpu0: 0, gpu1: 0, gpu2: 1, gpu3: 1 };
/** The four devices with their NUMA nodes, some of them unhealthy. */
const gpus = (...unhealthy: string[]) =>
  ['gpu0', 'gpu1', 'gpu2', 'gpu3'].map((id) => ({
    id,
    health: unhealthy.includes(id) ? 'Unhealthy' : 'Healthy',
    numa: [NUMA[id] ?? 0],
  }));

for (const way of ['plugins-dir', 'kubelet-socket'] as const) {
  test(`a Python grpcio device plugin registered through the ${way === 'plugins-dir' ? 'plugins directory' : 'legacy kubelet.sock'}`, {
    timeout: 120_000,
  }, async (t) => {
    if (!requirePythonGrpc(t)) return;
    const dir = createTempDir('berth-pyd-');
    t.after(() => dir.remove());
    const events: PluginEvent[] = [];
    const devices = createDevicePluginManager({
      databasePath: dir.join('devices.db'),
      socketDir: dir.join('device-plugins'),
      onEvent: (e) => events.push(e),
    });
    t.after(() => devices.stop());
    await devices.start();

    if (way === 'plugins-dir') {
      const manager = createPluginManager({ pluginsDir: dir.join('plugins_registry'), logger: silentLogger });
      manager.addHandler(
        'DevicePlugin',
        createDevicePluginHandler({ delegate: createDeviceManagerDelegate(devices) }),
      );
      t.after(() => manager.stop());
      await manager.start();
    }
    const plugin = spawnPythonDevicePlugin({
      socketPath: dir.join('device-plugins', 'py-gpu.sock'),
      resource: RESOURCE,
      ...(way === 'plugins-dir'
        ? { registrationSocket: dir.join('plugins_registry', 'py-gpu-reg.sock') }
        : { kubeletSocket: dir.join('device-plugins', 'kubelet.sock') }),
      devices: gpus(),
      preStart: true,
      preferred: true,
    });
    t.after(() => plugin.stop());
    if (way === 'plugins-dir') {
      const notified = await plugin.next('NotifyRegistrationStatus', (e) => e.event === 'notified');
      assert.deepEqual(notified, { event: 'notified', registered: true, error: '' });
    } else {
      await plugin
        .next('Register to succeed', (e) => e.event === 'registered' || e.event === 'register-failed')
        .then((e) => assert.equal(e.event, 'registered', e.error));
    }
    await plugin.next('ListAndWatch', (e) => e.event === 'list-and-watch');
    await waitFor('4 healthy devices', () => devices.get(RESOURCE)?.healthy === 4);
    const inventory = devices.get(RESOURCE);
    assert.equal(inventory?.via, way);
    assert.deepEqual(inventory?.options, { preStartRequired: true, getPreferredAllocationAvailable: true });
    assert.deepEqual(inventory?.topology, [
      { numaNode: 0, deviceIds: ['gpu0', 'gpu1'] },
      { numaNode: 1, deviceIds: ['gpu2', 'gpu3'] },
    ]);

    // Devices turn unhealthy, then back.
    plugin.setDevices(gpus('gpu1', 'gpu2'));
    await waitFor('2 unhealthy', () => devices.get(RESOURCE)?.unhealthy === 2);
    const down = events.filter((e) => e.type === 'devices-changed').at(-1);
    assert.deepEqual(down?.type === 'devices-changed' && down.changed, ['gpu1', 'gpu2']);

    // Allocation while two are unhealthy: the plugin prefers the highest ids among the healthy free ones.
    const allocation = await devices.allocate(RESOURCE, { workload: 'job-1', count: 1 });
    const preferred = await plugin.next('GetPreferredAllocation', (e) => e.event === 'preferred');
    assert.deepEqual(preferred, { event: 'preferred', available: ['gpu0', 'gpu3'], size: 1 });
    assert.deepEqual(allocation.deviceIds, ['gpu3']);
    assert.deepEqual(await plugin.next('Allocate', (e) => e.event === 'allocate'), {
      event: 'allocate',
      ids: ['gpu3'],
    });
    assert.deepEqual(await plugin.next('PreStartContainer', (e) => e.event === 'prestart'), {
      event: 'prestart',
      ids: ['gpu3'],
    });
    assert.deepEqual(allocation.envs, { PY_DEVICES: 'gpu3' });
    assert.deepEqual(allocation.annotations, { 'py.example.com/devices': 'gpu3' });
    assert.deepEqual(allocation.mounts, [{ containerPath: '/py', hostPath: '/var/py', readOnly: true }]);
    assert.deepEqual(allocation.devices, [
      { containerPath: '/dev/gpu3', hostPath: '/dev/gpu3', permissions: 'rwm' },
    ]);
    assert.deepEqual(allocation.cdiDevices, ['py.example.com/dev=gpu3']);

    plugin.setDevices(gpus('gpu3'));
    await waitFor(
      'gpu3 flagged in its allocation',
      () => devices.get(RESOURCE)?.allocations[0]?.unhealthyDeviceIds.join() === 'gpu3',
    );
    assert.equal(devices.get(RESOURCE)?.healthy, 3, 'gpu1 and gpu2 are back');

    // The plugin dies: its devices become unhealthy; the resource waits for it.
    await plugin.stop();
    await waitFor('all devices unhealthy', () => {
      const r = devices.get(RESOURCE);
      return r?.state === 'disconnected' && r.healthy === 0 && r.unhealthy === 4;
    });
  });
}
