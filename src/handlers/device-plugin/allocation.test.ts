/**
 * Allocation through a real device plugin on a real socket: the kubelet's
 * allocate scenarios (unregistered resource, no healthy devices, preferred
 * allocation only when offered, PreStartContainer only when asked), explicit
 * device ids, release, durability across a restart, and flagging devices that
 * turned unhealthy while allocated.
 */
import assert from 'node:assert/strict';
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import Database from 'better-sqlite3';
import { isBerthError } from '../../common/index.js';
import { type DevicePluginStub, startDevicePluginStub } from '../../testing/harness/index.js';
import { createTempDir, FakeClock, waitFor } from '../../testing/index.js';
import { pickPreferred } from './allocation-request.js';
import { AllocationStore } from './allocation-store.js';
import { createDevicePluginManager, type DevicePluginManager } from './device-manager.js';

const RESOURCE = 'example.com/gpu';

async function setup(t: { after: (fn: () => unknown) => void }) {
  const dir = createTempDir('berth-da-');
  const clock = new FakeClock();
  const make = () =>
    createDevicePluginManager({ databasePath: dir.join('devices.db'), clock, gracePeriodMs: 60_000 });
  let manager = make();
  const stubs: DevicePluginStub[] = [];
  t.after(async () => {
    await manager.stop();
    for (const stub of stubs) await stub.stop();
    dir.remove();
  });
  await manager.start();
  return {
    dir,
    clock,
    get manager(): DevicePluginManager {
      return manager;
    },
    async plugin(
      options: Omit<Parameters<typeof startDevicePluginStub>[0], 'socketPath'>,
      name = 'gpu.sock',
    ) {
      const stub = await startDevicePluginStub({ socketPath: join(dir.path, name), ...options });
      stubs.push(stub);
      await manager.connect(RESOURCE, stub.socketPath, { via: 'kubelet-socket' });
      const expected = (options.devices ?? []).length;
      await waitFor(
        'the first snapshot',
        () => (manager.get(RESOURCE)?.devices.length ?? -1) === expected && stub.openStreams === 1,
      );
      return stub;
    },
    async restart() {
      await manager.stop();
      manager = make();
      await manager.start();
      return manager;
    },
  };
}

const fourGpus = [{ id: 'gpu0' }, { id: 'gpu1' }, { id: 'gpu2' }, { id: 'gpu3' }];
const devicesUnavailable = (text: string | RegExp) => (err: unknown) => {
  assert.ok(isBerthError(err, 'BERTH_DEVICES_UNAVAILABLE'), String(err));
  if (typeof text === 'string') assert.equal((err as Error).message, text);
  else assert.match((err as Error).message, text);
  return true;
};

test('allocating an unregistered resource fails with the kubelet text', async (t) => {
  const f = await setup(t);
  await assert.rejects(
    f.manager.allocate('example.com/none', { workload: 'w1', count: 1 }),
    devicesUnavailable('cannot allocate unregistered device example.com/none'),
  );
});

test('allocating from a resource with no healthy devices fails with the kubelet text', async (t) => {
  const f = await setup(t);
  const stub = await f.plugin({ devices: [{ id: 'gpu0', health: 'Unhealthy' }] });
  await assert.rejects(
    f.manager.allocate(RESOURCE, { workload: 'w1', count: 1 }),
    devicesUnavailable('no healthy devices present; cannot allocate unhealthy devices example.com/gpu'),
  );
  assert.equal(stub.allocateCalls.length, 0);
});

test('count picks healthy free devices, calls Allocate, and returns what the plugin answered', async (t) => {
  const f = await setup(t);
  const stub = await f.plugin({ devices: [...fourGpus, { id: 'gpu4', health: 'Unhealthy' }] });
  const first = await f.manager.allocate(RESOURCE, { workload: 'w1', count: 2 });
  assert.deepEqual(first.deviceIds, ['gpu0', 'gpu1']);
  assert.deepEqual(stub.allocateCalls, [['gpu0', 'gpu1']]);
  assert.deepEqual(first.envs, { STUB_DEVICES: 'gpu0,gpu1' });
  assert.deepEqual(first.mounts, [{ containerPath: '/dev/stub', hostPath: '/var/stub', readOnly: true }]);
  assert.deepEqual(first.devices[1], {
    containerPath: '/dev/gpu1',
    hostPath: '/dev/gpu1',
    permissions: 'rw',
  });
  assert.deepEqual(first.annotations, { 'stub.example.com/devices': 'gpu0,gpu1' });
  assert.deepEqual(first.cdiDevices, ['example.com/stub=gpu0', 'example.com/stub=gpu1']);
  assert.deepEqual(first.unhealthyDeviceIds, []);
  assert.equal(stub.preferredCalls.length, 0, 'GetPreferredAllocation only when offered');
  assert.equal(stub.preStartCalls.length, 0, 'PreStartContainer only when asked');

  const second = await f.manager.allocate(RESOURCE, { workload: 'w2', count: 2 });
  assert.deepEqual(second.deviceIds, ['gpu2', 'gpu3'], 'allocated devices are not handed out twice');
  await assert.rejects(
    f.manager.allocate(RESOURCE, { workload: 'w3', count: 1 }),
    devicesUnavailable(
      'requested number of devices unavailable for example.com/gpu. Requested: 1, Available: 0',
    ),
  );
  await assert.rejects(f.manager.allocate(RESOURCE, { workload: 'w1', count: 1 }), (err: unknown) =>
    isBerthError(err, 'BERTH_ALLOCATION_EXISTS'),
  );
  const v = f.manager.get(RESOURCE);
  assert.deepEqual(
    v?.devices.map((d) => [d.id, d.allocatedTo]),
    [
      ['gpu0', 'w1'],
      ['gpu1', 'w1'],
      ['gpu2', 'w2'],
      ['gpu3', 'w2'],
      ['gpu4', null],
    ],
  );
  const released = await f.manager.release(RESOURCE, 'w1');
  assert.deepEqual(released.deviceIds, ['gpu0', 'gpu1']);
  await assert.rejects(f.manager.release(RESOURCE, 'w1'), (err: unknown) =>
    isBerthError(err, 'BERTH_ALLOCATION_NOT_FOUND'),
  );
  const third = await f.manager.allocate(RESOURCE, { workload: 'w3', count: 1 });
  assert.deepEqual(third.deviceIds, ['gpu0']);
});

test('GetPreferredAllocation is used when the plugin offers it; its unknown picks are ignored', async (t) => {
  const f = await setup(t);
  const stub = await f.plugin({
    devices: fourGpus,
    getPreferredAllocationAvailable: true,
    preferred: (_available, size) => ['gpu9', 'gpu3', 'gpu3', 'gpu2'].slice(0, size + 1),
  });
  const allocation = await f.manager.allocate(RESOURCE, { workload: 'w1', count: 2 });
  assert.deepEqual(stub.preferredCalls, [{ available: ['gpu0', 'gpu1', 'gpu2', 'gpu3'], size: 2 }]);
  assert.deepEqual(
    allocation.deviceIds,
    ['gpu3', 'gpu0'],
    'gpu9 is unknown; the rest is topped up from the free list',
  );
  assert.deepEqual(stub.allocateCalls, [['gpu3', 'gpu0']]);
});

test('pickPreferred keeps valid preferred ids in order and fills up', () => {
  assert.deepEqual(pickPreferred(['c', 'a'], ['a', 'b', 'c'], 2), ['c', 'a']);
  assert.deepEqual(pickPreferred(['x', 'c', 'c'], ['a', 'b', 'c'], 3), ['c', 'a', 'b']);
  assert.deepEqual(pickPreferred([], ['a', 'b'], 1), ['a']);
});

test('PreStartContainer is called when the plugin asks for it', async (t) => {
  const f = await setup(t);
  const stub = await f.plugin({ devices: fourGpus, preStartRequired: true });
  await f.manager.allocate(RESOURCE, { workload: 'w1', deviceIds: ['gpu2'] });
  assert.deepEqual(stub.preStartCalls, [['gpu2']]);
});

test('explicit device ids must be registered, healthy and free', async (t) => {
  const f = await setup(t);
  await f.plugin({ devices: [...fourGpus, { id: 'sick', health: 'Unhealthy' }] });
  await f.manager.allocate(RESOURCE, { workload: 'w1', deviceIds: ['gpu1', 'gpu3'] });
  await assert.rejects(
    f.manager.allocate(RESOURCE, { workload: 'w2', deviceIds: ['nope'] }),
    devicesUnavailable('cannot allocate unregistered device example.com/gpu nope'),
  );
  await assert.rejects(
    f.manager.allocate(RESOURCE, { workload: 'w2', deviceIds: ['sick'] }),
    devicesUnavailable('cannot allocate unhealthy device example.com/gpu sick'),
  );
  await assert.rejects(
    f.manager.allocate(RESOURCE, { workload: 'w2', deviceIds: ['gpu0', 'gpu3'] }),
    devicesUnavailable('device example.com/gpu gpu3 is allocated to workload w1'),
  );
});

test('malformed allocation requests are refused with a reason', async (t) => {
  const f = await setup(t);
  await f.plugin({ devices: fourGpus });
  const cases: Array<[unknown, RegExp]> = [
    [{ workload: '', count: 1 }, /workload must be/],
    [{ workload: 'bad/name', count: 1 }, /workload must be/],
    [{ workload: 'w', count: 0 }, /count must be a whole number from 1 to 1024/],
    [{ workload: 'w', count: 1.5 }, /count must be a whole number/],
    [{ workload: 'w' }, /either count or deviceIds/],
    [{ workload: 'w', count: 1, deviceIds: ['gpu0'] }, /either count or deviceIds/],
    [{ workload: 'w', deviceIds: [] }, /deviceIds must list 1 to 1024/],
    [{ workload: 'w', deviceIds: ['gpu0', 'gpu0'] }, /lists a device twice/],
    [{ workload: 'w', deviceIds: [7] }, /non-empty strings/],
  ];
  for (const [request, message] of cases) {
    await assert.rejects(
      f.manager.allocate(RESOURCE, request as never),
      (err: unknown) => isBerthError(err, 'BERTH_INVALID_ARGUMENT') && message.test((err as Error).message),
      JSON.stringify(request),
    );
  }
});

test('an Allocate error from the plugin is reported and nothing is recorded', async (t) => {
  const f = await setup(t);
  await f.plugin({ devices: fourGpus, allocateError: 'out of firmware' });
  await assert.rejects(f.manager.allocate(RESOURCE, { workload: 'w1', count: 1 }), (err: unknown) => {
    assert.ok(isBerthError(err, 'BERTH_PLUGIN_CALL_FAILED'));
    assert.match((err as Error).message, /^Allocate failed: out of firmware/);
    return true;
  });
  assert.deepEqual(f.manager.get(RESOURCE)?.allocations, []);
});

test('allocations survive a restart; devices that turned unhealthy while allocated are flagged', async (t) => {
  const f = await setup(t);
  const stub = await f.plugin({ devices: fourGpus });
  await f.manager.allocate(RESOURCE, { workload: 'w1', count: 2 });
  stub.setDevices([{ id: 'gpu0', health: 'Unhealthy' }, { id: 'gpu1' }, { id: 'gpu2' }, { id: 'gpu3' }]);
  await waitFor('gpu0 to be flagged', () => {
    const a = f.manager.get(RESOURCE)?.allocations[0];
    return a?.unhealthyDeviceIds.length === 1 && a.unhealthyDeviceIds[0] === 'gpu0';
  });

  const manager = await f.restart();
  const restored = manager.get(RESOURCE);
  assert.equal(restored?.state, 'disconnected', 'known again, waiting for its plugin');
  assert.equal(restored?.removeAt, f.clock.now() + 60_000);
  assert.deepEqual(
    restored?.allocations.map((a) => [a.workload, a.deviceIds, a.unhealthyDeviceIds]),
    [['w1', ['gpu0', 'gpu1'], ['gpu0', 'gpu1']]],
  );
  assert.deepEqual(restored?.allocations[0]?.envs, { STUB_DEVICES: 'gpu0,gpu1' });

  await manager.connect(RESOURCE, stub.socketPath, { via: 'kubelet-socket' });
  await waitFor(
    'the plugin to be back with gpu1 healthy',
    () => manager.get(RESOURCE)?.allocations[0]?.unhealthyDeviceIds.join() === 'gpu0',
  );
  const next = await manager.allocate(RESOURCE, { workload: 'w2', count: 2 });
  assert.deepEqual(next.deviceIds, ['gpu2', 'gpu3'], 'restored allocations still hold their devices');

  // Without its plugin the resource goes after the grace period; the allocations stay, flagged.
  await stub.stop();
  await waitFor('disconnect', () => manager.get(RESOURCE)?.state === 'disconnected');
  await f.clock.advance(60_000);
  const absent = manager.get(RESOURCE);
  assert.equal(absent?.state, 'absent');
  assert.deepEqual(
    absent?.allocations.map((a) => a.unhealthyDeviceIds),
    [
      ['gpu0', 'gpu1'],
      ['gpu2', 'gpu3'],
    ],
  );
});

test('the allocation file is WAL with synchronous=FULL, and a corrupt row is reported, not fatal', async (t) => {
  const f = await setup(t);
  await f.plugin({ devices: fourGpus });
  await f.manager.allocate(RESOURCE, { workload: 'w1', count: 1 });
  await f.manager.stop();
  const db = new Database(f.dir.join('devices.db'));
  assert.equal(db.pragma('journal_mode', { simple: true }), 'wal');
  db.prepare("INSERT INTO allocations VALUES ('example.com/gpu', 'broken', 'not json', '{}', 1)").run();
  db.close();
  const events: string[] = [];
  const manager = createDevicePluginManager({
    databasePath: f.dir.join('devices.db'),
    clock: f.clock,
    onEvent: (e) => {
      if (e.type === 'storage-error') events.push(e.error.message);
    },
  });
  t.after(() => manager.stop());
  await manager.start();
  assert.deepEqual(
    manager.get(RESOURCE)?.allocations.map((a) => a.workload),
    ['w1'],
  );
  assert.equal(events.length, 1);
  assert.match(events[0] ?? '', /^allocation example.com\/gpu\/broken: /);
});

test('devices.db is created by the first allocation, owner-only (0600) even under umask 000', async (t) => {
  const dir = createTempDir();
  t.after(() => dir.remove());
  const path = dir.join('state', 'devices.db');
  const manager = createDevicePluginManager({ databasePath: path, clock: new FakeClock() });
  await manager.start();
  t.after(() => manager.stop());
  assert.equal(existsSync(path), false, 'no file while nothing was allocated');
  assert.deepEqual(manager.list(), []);
  const store = new AllocationStore(path);
  t.after(() => store.close());
  assert.deepEqual(store.load(), { allocations: [], problems: [] });
  const previous = process.umask(0);
  try {
    store.add({
      resource: 'example.com/gpu',
      workload: 'w1',
      deviceIds: ['d1'],
      result: { envs: {}, mounts: [], devices: [], annotations: {}, cdiDevices: [] },
      allocatedAt: 1,
    });
  } finally {
    process.umask(previous);
  }
  assert.equal(statSync(path).mode & 0o777, 0o600);
  assert.equal(statSync(dir.join('state')).mode & 0o777, 0o700);
  // Another store on the same file reads what the first one created.
  const reopened = new AllocationStore(path);
  t.after(() => reopened.close());
  assert.deepEqual(
    reopened.load().allocations.map((a) => [a.resource, a.workload, a.deviceIds]),
    [['example.com/gpu', 'w1', ['d1']]],
  );
});
