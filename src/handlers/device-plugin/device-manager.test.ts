/**
 * The kubelet device manager's scenarios (manager_test.go, plugin/v1beta1
 * tests), as berth's own tests on real unix sockets and real gRPC: both ways
 * of registering, re-registration, capacity/allocatable bookkeeping, the grace
 * period, the checkpoint round trip, allocation, and the kubernetes#121994 race.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { isBerthError, type PluginEvent } from '../../common/index.js';
import { type DevicePluginStub, startDevicePluginStub } from '../../testing/harness/index.js';
import { createStaleSocket, createTempDir, FakeClock, type TempDir, waitFor } from '../../testing/index.js';
import { createDevicePluginManager, type DevicePluginManager } from './device-manager.js';
import { createDeviceManagerDelegate } from './device-plugin-handler.js';
import type { DevicePluginManagerOptions } from './device-plugin-options.js';
import type { DevicesChangedEvent } from './types.js';

const RESOURCE = 'fake-domain/resource';
const GRACE_MS = 5 * 60_000;

interface Fixture {
  dir: TempDir;
  clock: FakeClock;
  events: DevicesChangedEvent[];
  manager: DevicePluginManager;
  stubs: DevicePluginStub[];
  stub(
    name: string,
    options?: Omit<Parameters<typeof startDevicePluginStub>[0], 'socketPath'>,
  ): Promise<DevicePluginStub>;
  restart(): Promise<DevicePluginManager>;
}

async function setup(
  t: { after: (fn: () => unknown) => void },
  extra: Partial<DevicePluginManagerOptions> = {},
): Promise<Fixture> {
  const dir = createTempDir('berth-dp-');
  const clock = new FakeClock();
  const events: DevicesChangedEvent[] = [];
  const make = () =>
    createDevicePluginManager({
      databasePath: dir.join('devices.db'),
      socketDir: dir.join('device-plugins'),
      clock,
      onEvent: (event: PluginEvent) => {
        if (event.type === 'devices-changed') events.push(event);
      },
      ...extra,
    });
  const fixture: Fixture = {
    dir,
    clock,
    events,
    manager: make(),
    stubs: [],
    async stub(name, options = {}) {
      const stub = await startDevicePluginStub({
        socketPath: join(dir.path, 'device-plugins', name),
        ...options,
      });
      fixture.stubs.push(stub);
      return stub;
    },
    async restart() {
      await fixture.manager.stop();
      fixture.manager = make();
      await fixture.manager.start();
      return fixture.manager;
    },
  };
  t.after(async () => {
    await fixture.manager.stop();
    for (const stub of fixture.stubs) await stub.stop();
    dir.remove();
  });
  await fixture.manager.start();
  return fixture;
}

const view = (f: Fixture) => f.manager.get(RESOURCE);
const counts = (f: Fixture) => {
  const v = view(f);
  return v ? { healthy: v.healthy, unhealthy: v.unhealthy } : undefined;
};
const waitCounts = (f: Fixture, healthy: number, unhealthy: number, what = '') =>
  waitFor(`${RESOURCE} at ${healthy} healthy / ${unhealthy} unhealthy ${what}`, () => {
    const c = counts(f);
    return c?.healthy === healthy && c.unhealthy === unhealthy;
  });

function kubeletSocket(f: Fixture): string {
  const path = f.manager.registrationSocketPath;
  assert.ok(path, 'the legacy registration socket is served');
  return path;
}

const twoDevices = [{ id: 'Dev1' }, { id: 'Dev2' }];

test('a plugin registers through the legacy kubelet.sock (TestNewManagerImplStart)', async (t) => {
  const f = await setup(t);
  const stub = await f.stub('p1.sock', { devices: twoDevices });
  await stub.register(kubeletSocket(f), 'p1.sock', RESOURCE);
  await waitCounts(f, 2, 0);
  const v = view(f);
  assert.equal(v?.state, 'connected');
  assert.equal(v?.via, 'kubelet-socket');
  assert.equal(v?.endpoint, join(f.dir.path, 'device-plugins', 'p1.sock'));
  assert.equal(stub.optionsCalls, 1, 'GetDevicePluginOptions is called on registration');
  assert.deepEqual(
    f.events.map((e) => e.reason),
    ['connected', 'snapshot'],
  );
  await f.manager.stop();
  assert.equal(f.manager.state, 'stopped');
  await waitFor('the stream to close when the manager stops', () => stub.openStreams === 0);
});

test('a plugin registers through the plugins directory handler (TestNewManagerImplStartProbeMode)', async (t) => {
  const f = await setup(t);
  const stub = await f.stub('p1.sock', { devices: twoDevices });
  const handler = createDeviceManagerDelegate(f.manager);
  const context = {
    type: 'DevicePlugin',
    socketPath: f.dir.join('reg-p1.sock'),
    foundInDeprecatedDir: false,
  };
  await handler.registerPlugin(RESOURCE, stub.socketPath, ['v1beta1'], context);
  await waitCounts(f, 2, 0);
  assert.equal(view(f)?.via, 'plugins-dir');
  await handler.deRegisterPlugin(RESOURCE, stub.socketPath, context);
  await waitCounts(f, 0, 2, 'after deregistration');
  assert.equal(view(f)?.state, 'disconnected');
  await waitFor('the stream to be closed', () => stub.openStreams === 0);
});

for (const mode of ['kubelet-socket', 'plugins-dir'] as const) {
  test(`re-registration replaces the plugin's devices, leaving no orphans (TestDevicePluginReRegistration, ${mode})`, async (t) => {
    const f = await setup(t);
    const handler = createDeviceManagerDelegate(f.manager);
    const register = async (stub: DevicePluginStub, name: string) => {
      if (mode === 'kubelet-socket') await stub.register(kubeletSocket(f), name, RESOURCE);
      else {
        const context = {
          type: 'DevicePlugin',
          socketPath: f.dir.join(`reg-${name}`),
          foundInDeprecatedDir: false,
        };
        await handler.registerPlugin(RESOURCE, stub.socketPath, ['v1beta1'], context);
      }
    };
    const p1 = await f.stub('p.sock', { devices: twoDevices });
    await register(p1, 'p.sock');
    await waitCounts(f, 2, 0);

    const p2 = await f.stub('p.sock.new', { devices: twoDevices });
    await register(p2, 'p.sock.new');
    await waitFor('p2 to be the endpoint', () => view(f)?.endpoint === p2.socketPath);
    await waitCounts(f, 2, 0, "(devices shouldn't change)");
    await waitFor('p1 stream closed', () => p1.openStreams === 0);

    const p3 = await f.stub('p.sock.third', { devices: [{ id: 'Dev3' }] });
    await register(p3, 'p.sock.third');
    await waitFor('p3 to be the endpoint', () => view(f)?.endpoint === p3.socketPath);
    await waitCounts(f, 1, 0, '(devices of the previous plugin are removed)');
    assert.deepEqual(
      view(f)?.devices.map((d) => d.id),
      ['Dev3'],
    );
    await waitFor('p2 stream closed', () => p2.openStreams === 0);
    assert.equal(p3.openStreams, 1);
  });
}

test('the same plugin registering three times keeps one client and one stream (TestDuplicateRegistration)', async (t) => {
  const f = await setup(t);
  const stub = await f.stub('p.sock', { devices: twoDevices });
  for (let i = 0; i < 3; i++) await stub.register(kubeletSocket(f), 'p.sock', RESOURCE);
  await waitCounts(f, 2, 0);
  await waitFor('exactly one open stream', () => stub.openStreams === 1 && stub.listAndWatchCalls === 3);
  assert.equal(view(f)?.state, 'connected');
});

test('snapshots drive healthy and unhealthy counts; a stopped endpoint keeps capacity until the grace period (TestUpdateCapacityAllocatable)', async (t) => {
  const f = await setup(t);
  const stub = await f.stub('p.sock', {
    devices: [{ id: 'D1' }, { id: 'D2', health: 'Unhealthy' }, { id: 'D3', health: 'Unknown' }],
  });
  await stub.register(kubeletSocket(f), 'p.sock', RESOURCE);
  await waitCounts(f, 1, 2, '(any health other than "Healthy" is unhealthy)');

  stub.setDevices([{ id: 'D1', health: 'Unhealthy' }, { id: 'D2', health: 'Unhealthy' }, { id: 'D3' }]);
  // The counts stay 1/2 (D1 and D3 swap), so wait for the change itself.
  await waitFor('D1 and D3 to swap', () => f.events.at(-1)?.changed.join() === 'D1,D3');
  const eventsBefore = f.events.length;
  stub.setDevices([{ id: 'D1', health: 'Unhealthy' }, { id: 'D2', health: 'Unhealthy' }, { id: 'D3' }]);
  stub.setDevices([{ id: 'D1', health: 'Unhealthy' }, { id: 'D2' }, { id: 'D3' }]);
  await waitCounts(f, 2, 1, '(a device turning healthy raises healthy only)');
  const changed = f.events.at(-1);
  assert.deepEqual(changed?.changed, ['D2']);
  assert.equal(f.events.length, eventsBefore + 1, 'an unchanged snapshot is not an event');
  stub.setDevices([{ id: 'D2' }, { id: 'D3' }]);
  await waitCounts(f, 2, 0, '(a removed device lowers both)');

  await stub.stop();
  await waitCounts(f, 0, 2, '(capacity kept, nothing allocatable)');
  const stopped = view(f);
  assert.equal(stopped?.state, 'disconnected');
  assert.equal(stopped?.removeAt, f.clock.now() + GRACE_MS);
  assert.equal(f.events.at(-1)?.reason, 'disconnected');
  await f.clock.advance(GRACE_MS - 1);
  assert.ok(view(f), 'still there just before the grace period ends');
  await f.clock.advance(1);
  assert.equal(view(f), undefined, 'removed when the grace period ends');
  assert.equal(f.events.at(-1)?.reason, 'removed');
  assert.deepEqual(f.events.at(-1)?.changed, ['D2', 'D3']);
});

test('a plugin that comes back within the grace period keeps its resource', async (t) => {
  const f = await setup(t);
  const p1 = await f.stub('p.sock', { devices: twoDevices });
  await p1.register(kubeletSocket(f), 'p.sock', RESOURCE);
  await waitCounts(f, 2, 0);
  await p1.stop();
  await waitCounts(f, 0, 2);
  await f.clock.advance(GRACE_MS / 2);
  const p2 = await f.stub('p.sock', { devices: twoDevices });
  await p2.register(kubeletSocket(f), 'p.sock', RESOURCE);
  await waitCounts(f, 2, 0);
  await f.clock.advance(GRACE_MS);
  assert.equal(view(f)?.state, 'connected', 'the grace timer was cancelled');
  assert.equal(view(f)?.removeAt, null);
});

test('kubernetes#121994: the old plugin ending its stream cannot tear down the new registration', async (t) => {
  const f = await setup(t);
  const old = await f.stub('old.sock', { devices: twoDevices });
  await old.register(kubeletSocket(f), 'old.sock', RESOURCE);
  await waitCounts(f, 2, 0);
  const fresh = await f.stub('new.sock', { devices: [{ id: 'Dev1' }, { id: 'Dev2' }, { id: 'Dev3' }] });
  await fresh.register(kubeletSocket(f), 'new.sock', RESOURCE);
  await waitCounts(f, 3, 0);
  // The old instance terminates after the new one registered (the rolling-update order).
  old.endStreams();
  await old.stop();
  // Prove the old end was seen and ignored: a later change on the new stream still lands.
  fresh.setDevices([{ id: 'Dev1' }, { id: 'Dev2' }, { id: 'Dev3' }, { id: 'Dev4' }]);
  await waitCounts(f, 4, 0);
  assert.equal(view(f)?.state, 'connected');
  assert.equal(view(f)?.endpoint, fresh.socketPath);
  assert.equal(fresh.openStreams, 1);
  assert.ok(!f.events.some((e) => e.reason === 'disconnected'), 'no disconnect was reported');
});

test('kubernetes#121994: the old plugin ending its stream while the new one is registering leaves the new one connected', async (t) => {
  const f = await setup(t);
  const old = await f.stub('old.sock', { devices: twoDevices });
  await old.register(kubeletSocket(f), 'old.sock', RESOURCE);
  await waitCounts(f, 2, 0);
  let open!: () => void;
  const fresh = await f.stub('new.sock', {
    devices: [{ id: 'Dev3' }],
    optionsGate: new Promise<void>((resolve) => {
      open = resolve;
    }),
  });
  const registering = fresh.register(kubeletSocket(f), 'new.sock', RESOURCE);
  // The new plugin is dialled and asked for its options; meanwhile the old one terminates.
  await waitFor('the new plugin to be asked for its options', () => fresh.optionsCalls === 1);
  await old.stop();
  await waitCounts(f, 0, 2, '(the old plugin is gone)');
  open();
  await registering;
  await waitCounts(f, 1, 0, '(the new plugin is connected)');
  assert.equal(view(f)?.state, 'connected');
  assert.equal(view(f)?.endpoint, fresh.socketPath);
  assert.deepEqual(
    f.events.map((e) => e.reason),
    ['connected', 'snapshot', 'disconnected', 'connected', 'snapshot'],
  );
});

test('kubernetes#121994 through the plugins directory: deregistering the old instance leaves the new one', async (t) => {
  const f = await setup(t);
  const handler = createDeviceManagerDelegate(f.manager);
  const ctx = (name: string) => ({
    type: 'DevicePlugin',
    socketPath: f.dir.join(name),
    foundInDeprecatedDir: false,
  });
  const old = await f.stub('old.sock', { devices: twoDevices });
  await handler.registerPlugin(RESOURCE, old.socketPath, ['v1beta1'], ctx('reg-old.sock'));
  const fresh = await f.stub('new.sock', { devices: twoDevices });
  await handler.registerPlugin(RESOURCE, fresh.socketPath, ['v1beta1'], ctx('reg-new.sock'));
  await handler.deRegisterPlugin(RESOURCE, old.socketPath, ctx('reg-old.sock'));
  await old.stop();
  await waitFor('the new instance to stream', () => fresh.openStreams === 1);
  fresh.setDevices([{ id: 'Dev9' }]);
  await waitCounts(f, 1, 0, '(the new stream is still the live one)');
  assert.equal(view(f)?.endpoint, fresh.socketPath);
  await handler.deRegisterPlugin(RESOURCE, fresh.socketPath, ctx('reg-new.sock'));
  await waitCounts(f, 0, 1, 'once the current instance deregisters');
});

test('a failed connect leaves no client and keeps the current one (TestConnectFailureCleanup)', async (t) => {
  const f = await setup(t);
  const good = await f.stub('good.sock', { devices: twoDevices });
  await good.register(kubeletSocket(f), 'good.sock', RESOURCE);
  await waitCounts(f, 2, 0);
  await assert.rejects(good.register(kubeletSocket(f), 'missing.sock', RESOURCE), (err: Error) => {
    assert.match(err.message, /^failed to dial device plugin: no socket at .*missing\.sock$/);
    return true;
  });
  await assert.rejects(
    f.manager.connect('other.com/thing', f.dir.join('nothing.sock'), { via: 'kubelet-socket' }),
    (err: unknown) => isBerthError(err, 'BERTH_DIAL_FAILED'),
  );
  assert.equal(f.manager.get('other.com/thing'), undefined, 'no resource is left behind');
  assert.equal(view(f)?.endpoint, good.socketPath);
  assert.equal(good.openStreams, 1);
});

test('a stale plugin socket (nobody listening) fails the registration at once', {
  timeout: 60_000,
}, async (t) => {
  // With a 10-minute dial, only the connect probe can end this within the test's timeout.
  const f = await setup(t, { dialTimeoutMs: 600_000 });
  await createStaleSocket(f.dir.join('device-plugins', 'stale.sock'));
  const stub = await f.stub('p.sock', { devices: twoDevices });
  await assert.rejects(stub.register(kubeletSocket(f), 'stale.sock', RESOURCE), {
    message: /^failed to dial device plugin: connect ECONNREFUSED .*stale\.sock$/,
  });
  assert.equal(f.manager.get(RESOURCE), undefined);
});

test('stop does not wait for a plugin that never answers GetDevicePluginOptions', {
  timeout: 60_000,
}, async (t) => {
  // With a 10-minute options deadline, only closing the half-connected client lets stop end in time.
  const f = await setup(t, { optionsTimeoutMs: 600_000 });
  const stub = await f.stub('p.sock', { devices: twoDevices, optionsGate: new Promise<void>(() => {}) });
  const registering = stub.register(kubeletSocket(f), 'p.sock', RESOURCE).then(
    () => undefined,
    (err: Error) => err,
  );
  await waitFor('the options call', () => stub.optionsCalls === 1);
  await f.manager.stop();
  const err = await registering;
  assert.match(err?.message ?? 'registered', /failed to get device plugin options: Cancelled on client/);
  assert.equal(f.manager.state, 'stopped');
});

test('the legacy Register answers with the kubelet texts', async (t) => {
  const f = await setup(t);
  const stub = await f.stub('p.sock', { devices: twoDevices });
  const sock = kubeletSocket(f);
  await assert.rejects(stub.register(sock, 'p.sock', RESOURCE, 'v1alpha1'), {
    message: 'requested API version "v1alpha1" is not supported by kubelet. Supported version is ["v1beta1"]',
  });
  await assert.rejects(stub.register(sock, 'p.sock', 'kubernetes.io/gpu'), {
    message: 'the ResourceName "kubernetes.io/gpu" is invalid',
  });
  await assert.rejects(stub.register(sock, 'p.sock', 'nodomain'), {
    message: 'the ResourceName "nodomain" is invalid',
  });
  await assert.rejects(stub.register(sock, '../escape.sock', RESOURCE), /bad endpoint "..\/escape.sock"/);
  await assert.rejects(stub.register(sock, '/abs.sock', RESOURCE), /bad endpoint "\/abs.sock"/);
  assert.equal(f.manager.list().length, 0);
});

test('a bad snapshot is refused with a reason and the inventory is kept', async (t) => {
  const f = await setup(t, { maxDevicesPerResource: 3 });
  const stub = await f.stub('p.sock', { devices: twoDevices });
  await stub.register(kubeletSocket(f), 'p.sock', RESOURCE);
  await waitCounts(f, 2, 0);
  stub.setDevices([{ id: 'A' }, { id: 'A' }]);
  await waitFor('the duplicate to be reported', () => view(f)?.lastError?.includes('twice'));
  stub.setDevices([{ id: 'x'.repeat(64) }]);
  await waitFor('the long id to be reported', () => view(f)?.lastError?.includes('longer than 63'));
  stub.setDevices([{ id: 'a' }, { id: 'b' }, { id: 'c' }, { id: 'd' }]);
  await waitFor('the oversized snapshot to be reported', () => view(f)?.lastError?.includes('at most 3'));
  assert.deepEqual(
    view(f)?.devices.map((d) => d.id),
    ['Dev1', 'Dev2'],
  );
  stub.setDevices([{ id: 'a' }]);
  await waitCounts(f, 1, 0);
  assert.equal(view(f)?.lastError, null);
});

test('topology is reported per NUMA node', async (t) => {
  const f = await setup(t);
  const stub = await f.stub('p.sock', {
    devices: [
      { id: 'g0', numaNodes: [0] },
      { id: 'g1', numaNodes: [1] },
      { id: 'g2', numaNodes: [0, 1] },
      { id: 'g3' },
    ],
  });
  await stub.register(kubeletSocket(f), 'p.sock', RESOURCE);
  await waitCounts(f, 4, 0);
  assert.deepEqual(view(f)?.topology, [
    { numaNode: 0, deviceIds: ['g0', 'g2'] },
    { numaNode: 1, deviceIds: ['g1', 'g2'] },
    { numaNode: null, deviceIds: ['g3'] },
  ]);
});

test('the plugins-directory handler reports connect failures and rolls back when the next handler fails', async (t) => {
  const f = await setup(t);
  const ctx = { type: 'DevicePlugin', socketPath: f.dir.join('reg.sock'), foundInDeprecatedDir: false };
  const bare = createDeviceManagerDelegate(f.manager);
  await assert.rejects(async () => bare.registerPlugin(RESOURCE, 'relative.sock', ['v1beta1'], ctx), {
    message: 'bad socketPath, must be an absolute path: relative.sock',
  });
  await assert.rejects(async () => bare.registerPlugin(RESOURCE, f.dir.join('gone.sock'), ['v1beta1'], ctx), {
    message: /^failed to dial device plugin: no socket at /,
  });

  const stub = await f.stub('p.sock', { devices: twoDevices });
  const failing = createDeviceManagerDelegate(f.manager, {
    validatePlugin: () => undefined,
    registerPlugin: () => {
      throw new Error('registry is full');
    },
    deRegisterPlugin: () => undefined,
  });
  await assert.rejects(async () => failing.registerPlugin(RESOURCE, stub.socketPath, ['v1beta1'], ctx), {
    message: 'registry is full',
  });
  assert.equal(view(f)?.state, 'disconnected', 'the connection made for the failed registration is undone');
  await waitFor('the stream to be closed', () => stub.openStreams === 0);
});

test('several resources are independent; only healthy devices count as allocatable (TestGetAllocatableDevicesMultipleResources)', async (t) => {
  const f = await setup(t);
  const other = 'other-domain/resource';
  const a = await f.stub('a.sock', { devices: [{ id: 'A1' }, { id: 'A2', health: 'Unhealthy' }] });
  const b = await f.stub('b.sock', { devices: [{ id: 'B1' }, { id: 'B2' }, { id: 'B3' }] });
  await a.register(kubeletSocket(f), 'a.sock', RESOURCE);
  await b.register(kubeletSocket(f), 'b.sock', other);
  await waitFor('both inventories', () => f.manager.get(other)?.healthy === 3 && counts(f)?.healthy === 1);
  assert.deepEqual(
    f.manager.list().map((r) => [r.resource, r.healthy, r.unhealthy]),
    [
      [RESOURCE, 1, 1],
      [other, 3, 0],
    ],
  );
  await a.stop();
  await waitCounts(f, 0, 2);
  assert.equal(f.manager.get(other)?.healthy, 3, 'the other resource is not disturbed');
  assert.equal(f.manager.get(other)?.state, 'connected');
});
