/**
 * Built-in handlers in observe mode (HandlerServices.mode 'observe'): read-only
 * calls only, against real plugins over gRPC. The device plugin handler serves
 * no kubelet.sock, connects (options, ListAndWatch) and refuses allocations;
 * the DRA handler tracks connection state and refuses claim preparation; what
 * they show is flagged observed.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isBerthError } from '../common/index.js';
import { recordingServices, startDevicePluginStub, startDraTestDriver } from '../testing/harness/index.js';
import { createTempDir, waitFor } from '../testing/index.js';
import { createDevicePluginBuiltin } from './device-plugin/index.js';
import { createDraHandler } from './dra/index.js';

const observing = (type: string, socketPath: string) => ({
  type,
  socketPath,
  foundInDeprecatedDir: false,
  mode: 'observe' as const,
});

describe('built-in handlers in observe mode', () => {
  it('device plugins: inventory from read-only calls, no kubelet.sock, no allocation', async (t) => {
    const dir = createTempDir();
    t.after(() => dir.remove());
    const handler = createDevicePluginBuiltin(recordingServices({ dataDir: dir.path, mode: 'observe' }));
    t.after(() => handler.stop?.());
    await handler.start?.();
    assert.equal(handler.manager.registrationSocketPath, undefined, 'an observer serves no kubelet.sock');

    const stub = await startDevicePluginStub({
      socketPath: dir.join('gpu.sock'),
      devices: [{ id: 'gpu-0' }, { id: 'gpu-1' }],
      preStartRequired: true,
    });
    t.after(() => stub.stop());
    const context = observing('DevicePlugin', dir.join('reg.sock'));
    await handler.validatePlugin('vendor.com/gpu', stub.socketPath, ['v1beta1'], context);
    await handler.registerPlugin('vendor.com/gpu', stub.socketPath, ['v1beta1'], context);
    const view = await waitFor('the inventory', () => {
      const r = handler.manager.get('vendor.com/gpu');
      return r?.healthy === 2 ? r : undefined;
    });
    assert.equal(view.observed, true);
    assert.equal(stub.optionsCalls, 1);
    assert.equal(stub.listAndWatchCalls, 1);

    await assert.rejects(handler.manager.allocate('vendor.com/gpu', { workload: 'w', count: 1 }), (err) =>
      isBerthError(err, 'BERTH_OBSERVE_ONLY'),
    );
    await assert.rejects(handler.manager.release('vendor.com/gpu', 'w'), (err) =>
      isBerthError(err, 'BERTH_OBSERVE_ONLY'),
    );
    assert.deepEqual(stub.allocateCalls, []);
    assert.deepEqual(stub.preStartCalls, []);
    assert.deepEqual(stub.preferredCalls, []);
  });

  it('DRA: connection state only, no NodePrepareResources', async (t) => {
    const dir = createTempDir();
    t.after(() => dir.remove());
    const handler = createDraHandler(recordingServices({ dataDir: dir.path, mode: 'observe' }));
    t.after(() => handler.stop());
    const driver = await startDraTestDriver(dir.join('dra.sock'), 'v1.DRAPlugin');
    t.after(() => driver.stop());
    const context = observing('DRAPlugin', dir.join('reg.sock'));
    await handler.validatePlugin('dra.example.com', driver.socketPath, ['v1.DRAPlugin'], context);
    await handler.registerPlugin('dra.example.com', driver.socketPath, ['v1.DRAPlugin'], context);
    const view = await waitFor('connected', () => {
      const d = handler.drivers()[0];
      return d?.usable ? d : undefined;
    });
    assert.equal(view.observed, true);
    const claims = [{ namespace: 'ns', uid: 'u1', name: 'c1' }];
    await assert.rejects(handler.prepare('dra.example.com', claims), (err) =>
      isBerthError(err, 'BERTH_OBSERVE_ONLY'),
    );
    await assert.rejects(handler.unprepare('dra.example.com', claims), (err) =>
      isBerthError(err, 'BERTH_OBSERVE_ONLY'),
    );
    assert.deepEqual(driver.calls, []);
  });
});
