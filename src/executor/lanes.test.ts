import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { describe, it, type TestContext } from 'node:test';
import { createActualStateOfWorld } from '../cache/index.js';
import { silentLogger } from '../common/index.js';
import type { PluginHandler } from '../handlers/types.js';
import {
  createExamplePlugin,
  dialRegistration,
  type RegistrationServerBehaviour,
} from '../registration/index.js';
import { createTempDir, FakeClock, RecordingHandler, waitFor } from '../testing/index.js';
import { createOperationExecutor } from './operation-executor.js';
import { Slots } from './slots.js';
import type { OperationEvent, OperationExecutorOptions } from './types.js';

/**
 * The lanes' budgets run on the injected clock (FakeClock here), so a test
 * decides when a holder has overrun; the sockets, plugins and gRPC are real.
 */
function setup(t: TestContext, options: Partial<OperationExecutorOptions> = {}) {
  const dir = createTempDir('berth-lanes-');
  const clock = new FakeClock();
  const events: OperationEvent[] = [];
  const executor = createOperationExecutor({
    clock,
    logger: silentLogger,
    dial: dialRegistration,
    timeouts: { getInfoMs: 60_000 },
    onEvent: (e) => events.push(e),
    ...options,
  });
  const asw = createActualStateOfWorld();
  t.after(async () => {
    await executor.stop();
    dir.remove();
  });
  let uuid = 0;
  const plugin = async (name: string, type: string, behaviour: RegistrationServerBehaviour = {}) => {
    const p = createExamplePlugin({
      socketPath: dir.join(`${name}.sock`),
      name,
      type,
      versions: ['v1'],
      behaviour,
    });
    t.after(() => p.stop());
    await p.start();
    return p;
  };
  const register = (socketPath: string, handlers: Record<string, PluginHandler>, generation = `g${uuid++}`) =>
    executor.registerPlugin(
      socketPath,
      { uuid: generation, timestamp: 1, foundInDeprecatedDir: false },
      (type) => handlers[type],
      asw,
    );
  const succeeded = (socketPath: string) =>
    events.some((e) => e.type === 'register-succeeded' && e.socketPath === socketPath);
  return { clock, dir, executor, events, plugin, register, succeeded };
}

describe('registration lanes', () => {
  it('a lease is taken back after its budget; the holder carries on and its release is then a no-op', async () => {
    const clock = new FakeClock();
    const slots = new Slots(1);
    let overruns = 0;
    const lease = await slots.lease(undefined, { clock, ms: 500, onOverrun: () => overruns++ });
    const waiting = slots.lease();
    assert.equal(slots.waiting, 1);
    await clock.advance(499);
    assert.equal(slots.waiting, 1, 'still held inside its budget');
    await clock.advance(1);
    const next = await waiting;
    assert.equal(overruns, 1);
    assert.equal(lease.overran, true);
    lease.release(); // the overrun holder finishing: must not free the slot its successor holds
    assert.equal(slots.held, 1);
    next.release();
    assert.equal(slots.held, 0);
  });

  it('a slot acquired first and leased later is one slot: the budget applies from the lease, and release frees it', async () => {
    const clock = new FakeClock();
    const slots = new Slots(1);
    await slots.acquire();
    assert.equal(slots.held, 1);
    const waiting = slots.lease();
    let overruns = 0;
    const lease = slots.leaseAcquired({ clock, ms: 300, onOverrun: () => overruns++ });
    assert.equal(slots.held, 1, 'leasing the acquired slot takes no second one');
    await clock.advance(300);
    const next = await waiting;
    assert.equal(overruns, 1);
    lease.release();
    assert.equal(slots.held, 1);
    next.release();
    assert.equal(slots.held, 0);
  });

  it('attempts waiting for a slot have not dialled, and stopping settles them without leaking a slot', async (t) => {
    const s = setup(t, { maxConcurrentRegistrations: 1 });
    const handlers = { T: new RecordingHandler() };
    const stalled = await s.plugin('stall', 'T', { hangGetInfo: true });
    s.register(stalled.socketPath, handlers);
    await waitFor('the stalled handshake to hold the slot', () => s.executor.laneUsage().main.held === 1);
    // Listeners that count connections: an attempt that dials while it waits shows here.
    let connections = 0;
    const queued = ['q1.sock', 'q2.sock'].map((name) => s.dir.join(name));
    for (const path of queued) {
      const server = createServer((socket) => {
        connections += 1;
        socket.destroy();
      });
      await new Promise<void>((resolve) => server.listen(path, resolve));
      t.after(() => server.close());
      s.register(path, handlers);
    }
    await waitFor('both to wait for the slot', () => s.executor.laneUsage().main.waiting === 2);
    for (const path of queued) assert.equal(s.executor.isPending(path), true);
    assert.equal(connections, 0, 'a waiting attempt dialled');
    await s.executor.stop();
    assert.equal(s.executor.running, 0);
    const usage = s.executor.laneUsage();
    assert.deepEqual([usage.main.held, usage.main.waiting], [0, 0]);
    for (const path of queued)
      assert.ok(
        s.events.some((e) => e.type === 'register-failed' && e.socketPath === path),
        `${path} settled`,
      );
    assert.equal(connections, 0);
  });

  it('stalled handshakes hold every slot only for the handshake budget, then a fresh plugin passes', async (t) => {
    const s = setup(t, { maxConcurrentRegistrations: 2 });
    const handler = new RecordingHandler();
    const handlers = { T: handler };
    const stalled = await Promise.all([
      s.plugin('stall-a', 'T', { hangGetInfo: true }),
      s.plugin('stall-b', 'T', { hangGetInfo: true }),
    ]);
    for (const p of stalled) s.register(p.socketPath, handlers);
    const good = await s.plugin('good', 'T');
    s.register(good.socketPath, handlers);
    await waitFor('the good plugin to queue behind the stalled ones', () => {
      const { main } = s.executor.laneUsage();
      return main.held === 2 && main.waiting === 1;
    });
    await s.clock.advance(500); // DEFAULT_SLOT_BUDGETS.handshakeMs
    const status = await good.nextStatus(10_000);
    assert.equal(status.pluginRegistered, true);
    await waitFor('the good registration to settle', () => s.succeeded(good.socketPath));
    // The stalled ones carry on without a slot (their GetInfo deadline is 60 s) and are still pending.
    assert.equal(s.executor.laneUsage().main.held, 0);
    for (const p of stalled) assert.equal(s.executor.isPending(p.socketPath), true);
  });

  it('a socket whose attempt overran runs its next attempt in the slow lane, not in front of fresh ones', async (t) => {
    const s = setup(t, { timeouts: { getInfoMs: 200 }, backoff: false });
    const handlers = { T: new RecordingHandler() };
    const stalled = await s.plugin('stall', 'T', { hangGetInfo: true });
    s.register(stalled.socketPath, handlers, 'g-stall');
    await waitFor('the handshake to hold a main slot', () => s.executor.laneUsage().main.held === 1);
    await s.clock.advance(500);
    await waitFor('the attempt to fail (GetInfo deadline)', () =>
      s.events.some((e) => e.type === 'register-failed' && e.socketPath === stalled.socketPath),
    );
    assert.equal(s.executor.laneUsage().offenders, 1);
    s.register(stalled.socketPath, handlers, 'g-stall');
    await waitFor('the retry to hold a slow-lane slot', () => s.executor.laneUsage().slow.held === 1);
    assert.equal(s.executor.laneUsage().main.held, 0);
    // A new generation of the socket (the file re-created) is fresh again.
    await waitFor('the retry to fail', () => !s.executor.isPending(stalled.socketPath));
    s.register(stalled.socketPath, handlers, 'g-new');
    await waitFor('the new generation to take a main slot', () => s.executor.laneUsage().main.held === 1);
  });

  it("a type's hanging handler calls hold only that type's lane, each for the handler budget", async (t) => {
    const s = setup(t, { slotBudgets: { handlerSlots: 1 } });
    const releases: Array<() => void> = [];
    const hanging = new RecordingHandler();
    hanging.registerPlugin = () => new Promise<void>((resolve) => releases.push(resolve));
    const handlers = { Hang: hanging, T: new RecordingHandler() };
    const first = await s.plugin('hang-1', 'Hang');
    s.register(first.socketPath, handlers);
    await waitFor('the hanging handler call to hold its lane', () => {
      return s.executor.laneUsage().handlers.Hang?.held === 1;
    });
    // Another type is not held up at all.
    const other = await s.plugin('other', 'T');
    s.register(other.socketPath, handlers);
    assert.equal((await other.nextStatus(10_000)).pluginRegistered, true);
    // The same type queues for the budget, then passes while the first still hangs.
    const second = await s.plugin('hang-2', 'Hang');
    s.register(second.socketPath, handlers);
    await waitFor(
      'the second to wait for the lane',
      () => s.executor.laneUsage().handlers.Hang?.waiting === 1,
    );
    await s.clock.advance(500); // DEFAULT_SLOT_BUDGETS.handlerMs
    await waitFor('the second to get the lane', () => s.executor.laneUsage().handlers.Hang?.waiting === 0);
    await waitFor('both to be in the hanging call', () => releases.length === 2);
    for (const release of releases) release();
    assert.equal((await first.nextStatus(10_000)).pluginRegistered, true);
  });
});
