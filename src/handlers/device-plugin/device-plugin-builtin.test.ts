/**
 * The DevicePlugin entry of the builtinHandlers table, built from
 * HandlerServices as the daemon builds it: files under the data directory,
 * handlerOptions.DevicePlugin honoured, events onto the services' sink, the
 * kubelet's checks before the device manager, the delegate after it.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { test } from 'node:test';
import { recordingServices, startDevicePluginStub } from '../../testing/harness/index.js';
import { createTempDir, FakeClock, RecordingHandler, waitFor } from '../../testing/index.js';
import { createDevicePluginBuiltin } from './device-plugin-builtin.js';

test('built from services: device-plugins/kubelet.sock under the data dir (devices.db once something is allocated), events to the sink', async (t) => {
  const dir = createTempDir('berth-dpb-');
  t.after(() => dir.remove());
  const clock = new FakeClock();
  const services = recordingServices({ dataDir: dir.path, clock, options: { gracePeriodMs: 1_000 } });
  const delegate = new RecordingHandler();
  const handler = createDevicePluginBuiltin(services, delegate);
  t.after(() => handler.stop?.());
  await handler.start?.();
  assert.equal(handler.type, 'DevicePlugin');
  assert.equal(handler.manager.registrationSocketPath, dir.join('device-plugins', 'kubelet.sock'));
  assert.ok(existsSync(dir.join('device-plugins', 'kubelet.sock')));
  assert.ok(!existsSync(dir.join('devices.db')), 'devices.db is created by the first allocation');

  const context = { type: 'DevicePlugin', socketPath: dir.join('reg.sock'), foundInDeprecatedDir: false };
  await assert.rejects(async () => handler.validatePlugin('gpu', '/x.sock', ['v1beta1'], context), {
    message: 'invalid name of device plugin socket: the ResourceName "gpu" is invalid',
  });
  const stub = await startDevicePluginStub({ socketPath: dir.join('gpu.sock'), devices: [{ id: 'g0' }] });
  t.after(() => stub.stop());
  await handler.validatePlugin('example.com/gpu', stub.socketPath, ['v1beta1'], context);
  await handler.registerPlugin('example.com/gpu', stub.socketPath, ['v1beta1'], context);
  await waitFor('the devices-changed event', () =>
    services.events.some((e) => e.type === 'devices-changed' && e.reason === 'snapshot' && e.healthy === 1),
  );
  assert.deepEqual(
    delegate.calls.map((c) => c.op),
    ['validate', 'register'],
  );
  await handler.deRegisterPlugin('example.com/gpu', stub.socketPath, context);
  assert.equal(handler.manager.get('example.com/gpu')?.state, 'disconnected');
  await clock.advance(1_000);
  assert.equal(
    handler.manager.get('example.com/gpu'),
    undefined,
    'handlerOptions.DevicePlugin.gracePeriodMs applies',
  );
});

test('socketDir false serves no legacy socket', async (t) => {
  const dir = createTempDir('berth-dpb-');
  t.after(() => dir.remove());
  const handler = createDevicePluginBuiltin(
    recordingServices({ dataDir: dir.path, options: { socketDir: false } }),
  );
  t.after(() => handler.stop?.());
  await handler.start?.();
  assert.equal(handler.manager.registrationSocketPath, undefined);
  assert.equal(existsSync(dir.join('device-plugins')), false);
});
