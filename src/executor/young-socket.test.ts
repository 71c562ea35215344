import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { describe, it, type TestContext } from 'node:test';
import { isBerthError } from '../common/index.js';
import { createRegistrationServer, dialRegistration } from '../registration/index.js';
import type { DialRegistration } from '../registration/types.js';
import { startPluginFarm } from '../testing/harness/index.js';
import { createStaleSocket, createTempDir, waitFor } from '../testing/index.js';
import { DEFAULT_EXECUTOR_TIMEOUTS } from './executor-options.js';
import { Slots } from './slots.js';
import { dialYoungSocket, isConnectionRefused } from './young-socket.js';

/** A registration server on a real socket, and real-dial deps over one slot (not taken yet). */
async function liveServerAndSlots(t: TestContext) {
  const dir = createTempDir('berth-young-');
  const server = createRegistrationServer({
    socketPath: dir.join('live.sock'),
    info: { type: 'T', name: 'n', endpoint: '', supportedVersions: ['1'] },
  });
  t.after(async () => {
    await server.stop();
    dir.remove();
  });
  await server.start();
  return { server, ...realDial() };
}

/** Real-dial deps over one slot (not taken yet), without young-socket retries. */
function realDial(timeouts = DEFAULT_EXECUTOR_TIMEOUTS) {
  const slots = new Slots(1);
  return { slots, deps: { dial: dialRegistration, timeouts, slots, youngSocketRetry: false as const } };
}

describe('dialYoungSocket: a slot is taken before the connect, and a refused connect gives it back at once', () => {
  it('a stale socket waits its turn, holds the slot for one refused connect and gives it back', async () => {
    await using dir = createTempDir('berth-young-');
    const path = dir.join('stale.sock');
    await createStaleSocket(path);
    const { slots, deps } = realDial();
    await slots.acquire(); // every slot taken
    const pending = dialYoungSocket(deps, path, new AbortController().signal).then(
      () => assert.fail('a stale socket must not register'),
      (e: unknown) => e,
    );
    await waitFor('the dial to wait for a slot', () => slots.waiting === 1, { timeoutMs: 10_000 });
    slots.release();
    const err = await pending;
    assert.ok(isConnectionRefused(err));
    assert.match((err as Error).message, /ECONNREFUSED/);
    assert.equal(slots.held, 0, 'the refused connect gave its slot back');
    assert.equal(slots.waiting, 0);
  });

  it('a listening socket is not connected until a slot is free, and the dial returns holding it', async (t) => {
    const { server, slots, deps } = await liveServerAndSlots(t);
    await slots.acquire(); // every slot taken
    let dials = 0;
    let getInfoFirstMs: number | undefined;
    const dial: DialRegistration = (path, options) => {
      dials += 1;
      getInfoFirstMs = options.getInfoFirstMs;
      return dialRegistration(path, options);
    };
    const pending = dialYoungSocket({ ...deps, dial }, server.socketPath, new AbortController().signal);
    await waitFor('the dial to wait for a slot', () => slots.waiting === 1, { timeoutMs: 10_000 });
    assert.equal(dials, 0, 'no connect while every slot is taken');
    slots.release();
    const { conn } = await pending;
    assert.equal(dials, 1);
    assert.equal(slots.held, 1, 'the dial returns holding the slot');
    // GetInfo, the attempt's next call, went out with the dial under the attempt's GetInfo deadline.
    assert.equal(getInfoFirstMs, deps.timeouts.getInfoMs);
    await waitFor('GetInfo sent with the dial', () => server.getInfoCalls === 1, { timeoutMs: 10_000 });
    assert.equal((await conn.getInfo({ timeoutMs: 5_000 })).name, 'n');
    assert.equal(server.getInfoCalls, 1, 'getInfo() took the early call');
    conn.close();
    slots.release();
  });

  it('an aborted wait for a slot never connects and holds nothing', async (t) => {
    const { server, slots, deps } = await liveServerAndSlots(t);
    await slots.acquire();
    let dialled = false;
    const dial: DialRegistration = (path, options) => {
      dialled = true;
      return dialRegistration(path, options);
    };
    const controller = new AbortController();
    const pending = dialYoungSocket({ ...deps, dial }, server.socketPath, controller.signal);
    await waitFor('the dial to wait for a slot', () => slots.waiting === 1, { timeoutMs: 10_000 });
    controller.abort();
    await assert.rejects(pending, (err: unknown) => isBerthError(err, 'BERTH_ABORTED'));
    assert.equal(dialled, false);
    assert.equal(slots.held, 1, 'only the slot this test took');
    slots.release();
    assert.equal(slots.held, 0, 'the aborted wait was skipped, not granted');
  });

  it("a connection reset over and over holds exactly one slot until the dial's deadline, then gives it back", async (t) => {
    await using dir = createTempDir('berth-young-');
    const path = dir.join('resets.sock');
    // Accepts every connection and resets it at once: a plugin dying over and over.
    const server = createServer((socket) => socket.destroy());
    await new Promise<void>((resolve) => server.listen(path, resolve));
    t.after(() => new Promise((resolve) => server.close(resolve)));
    const { slots, deps } = realDial({ ...DEFAULT_EXECUTOR_TIMEOUTS, dialMs: 300 });
    const pending = dialYoungSocket(deps, path, new AbortController().signal).then(
      () => assert.fail('nothing speaks HTTP/2 there'),
      (e: unknown) => e,
    );
    await waitFor('the dial to hold the slot', () => slots.held === 1, { timeoutMs: 10_000 });
    const err = await pending;
    assert.ok(isBerthError(err, 'BERTH_DIAL_FAILED'), String(err));
    assert.match((err as Error).message, /timed out after 300 ms \(the listener closed the connection/);
    assert.equal(slots.held, 0, 'the one slot it held was given back');
    assert.equal(slots.waiting, 0);
  });

  it('an injected dial runs holding the slot', async () => {
    const slots = new Slots(2);
    let heldDuringDial = -1;
    const dial: DialRegistration = async () => {
      heldDuringDial = slots.held;
      return { close() {} } as unknown as Awaited<ReturnType<DialRegistration>>;
    };
    const deps = { dial, timeouts: DEFAULT_EXECUTOR_TIMEOUTS, slots, youngSocketRetry: false as const };
    await dialYoungSocket(deps, '/nowhere.sock', new AbortController().signal);
    assert.equal(heldDuringDial, 1);
    assert.equal(slots.held, 1);
  });

  it('a lone young socket is polled every millisecond at first; in a crowd it keeps the sparse schedule', async (t) => {
    const farm = await startPluginFarm();
    t.after(() => farm.stop());
    await using dir = createTempDir('berth-young-');
    // No sparse delays at all: only the dense phase can carry a dial across the bind -> listen gap.
    const retry = { ageMs: 5_000, delaysMs: [], dense: { forMs: 5_000, stepMs: 1, whileAtMost: 1 } };
    const dialDuringGap = async (name: string, retrying: { count: number }) => {
      const path = dir.join(name);
      const served = farm.serve([path], { gapMs: 500 });
      await waitFor('the socket file (bound, not listening yet)', () => existsSync(path), {
        timeoutMs: 10_000,
      });
      const deps = {
        dial: dialRegistration,
        timeouts: DEFAULT_EXECUTOR_TIMEOUTS,
        youngSocketRetry: retry,
        retrying,
      };
      try {
        const { conn } = await dialYoungSocket(deps, path, new AbortController().signal);
        conn.close();
        return 'registered';
      } catch (err) {
        return isConnectionRefused(err) ? 'refused' : String(err);
      } finally {
        await served;
      }
    };
    const retrying = { count: 0 };
    assert.equal(await dialDuringGap('lone.sock', retrying), 'registered');
    assert.equal(retrying.count, 0, 'the count is given back');
    // One other socket already retrying: more than whileAtMost, so no dense phase, and no delays left.
    assert.equal(await dialDuringGap('crowd.sock', { count: 1 }), 'refused');
  });
});
