import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { DialRegistration } from '../registration/types.js';
import { createStaleSocket, createTempDir, serveSocket, waitFor } from '../testing/index.js';
import { DEFAULT_EXECUTOR_TIMEOUTS } from './executor-options.js';
import { Slots } from './slots.js';
import { dialYoungSocket, isConnectionRefused } from './young-socket.js';

/** A dial that records its calls and fails like a refused connect (no gRPC needed here). */
function recordingDial() {
  const calls: string[] = [];
  const dial: DialRegistration = async (socketPath) => {
    calls.push(socketPath);
    throw Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
  };
  return { calls, dial };
}

describe('dialYoungSocket: a stale socket holds no slot', () => {
  it('a retry after a refusal probes first: a stale file fails without a slot or a dial', async () => {
    await using dir = createTempDir('berth-young-');
    const path = dir.join('stale.sock');
    await createStaleSocket(path);
    const { calls, dial } = recordingDial();
    const slots = new Slots(2);
    const deps = { dial, timeouts: DEFAULT_EXECUTOR_TIMEOUTS, slots, youngSocketRetry: false as const };
    const err = await dialYoungSocket({ ...deps, probeFirst: true }, path, new AbortController().signal).then(
      () => assert.fail('a stale socket must not dial'),
      (e: unknown) => e,
    );
    assert.ok(isConnectionRefused(err));
    assert.match((err as Error).message, /connection refused/);
    assert.deepEqual(calls, [], 'no dial (no gRPC channel) for a probe that was refused');
    assert.equal(slots.held, 0);
  });

  it("a first attempt waits for a slot and dials without a probe; its refusal is the dial's own", async () => {
    await using dir = createTempDir('berth-young-');
    const path = dir.join('stale.sock');
    await createStaleSocket(path);
    const { calls, dial } = recordingDial();
    const slots = new Slots(1);
    const deps = { dial, timeouts: DEFAULT_EXECUTOR_TIMEOUTS, slots, youngSocketRetry: false as const };
    const signal = new AbortController().signal;

    await slots.acquire(); // every slot taken
    const pending = dialYoungSocket(deps, path, signal).then(
      () => assert.fail('a stale socket must not register'),
      (e: unknown) => e,
    );
    await waitFor('the dial to wait for a slot', () => slots.waiting === 1, { timeoutMs: 10_000 });
    assert.deepEqual(calls, [], 'no dial before a slot is free');
    slots.release();
    const err = await pending;
    assert.match((err as Error).message, /ECONNREFUSED/);
    assert.deepEqual(calls, [path]);
    assert.equal(slots.held, 0, 'the slot taken for the dial was given back');
  });

  it('a listening socket passes the probe and is dialled holding a slot', async () => {
    await using dir = createTempDir('berth-young-');
    const served = await serveSocket(dir.join('live.sock'));
    try {
      const slots = new Slots(1);
      let heldDuringDial = -1;
      const dial: DialRegistration = async () => {
        heldDuringDial = slots.held;
        return { close() {} } as unknown as Awaited<ReturnType<DialRegistration>>;
      };
      const deps = { dial, timeouts: DEFAULT_EXECUTOR_TIMEOUTS, slots, youngSocketRetry: false as const };
      await dialYoungSocket({ ...deps, probeFirst: true }, served.path, new AbortController().signal);
      assert.equal(heldDuringDial, 1);
      slots.release();
    } finally {
      await served.close();
    }
  });
});
