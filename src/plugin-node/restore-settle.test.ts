import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FakeClock, settle } from '../testing/index.js';
import { type SettleState, waitForRestoredSockets } from './restore-settle.js';

interface SocketStatus {
  socketPath: string;
  state: SettleState;
  attempts: number;
}

function harness(initial: SocketStatus[]) {
  let sockets = initial;
  const listeners = new Set<(socketPath: string) => void>();
  return {
    set(next: SocketStatus[]) {
      sockets = next;
      for (const s of next) for (const l of [...listeners]) l(s.socketPath);
    },
    state: (socketPath: string) => sockets.find((s) => s.socketPath === socketPath)?.state,
    onChange(listener: (socketPath: string) => void) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    listeners,
  };
}

describe('waiting for restored sockets', () => {
  it('resolves once every restored socket still present has settled', async () => {
    const clock = new FakeClock();
    const h = harness([
      { socketPath: '/a.sock', state: 'pending', attempts: 0 },
      { socketPath: '/new.sock', state: 'pending', attempts: 0 },
    ]);
    let done = false;
    const waiting = waitForRestoredSockets({
      ...h,
      restored: new Set(['/a.sock', '/gone.sock']),
      clock,
      timeoutMs: 5000,
    }).then(() => (done = true));
    await settle();
    assert.equal(done, false);
    h.set([
      { socketPath: '/a.sock', state: 'registered', attempts: 1 },
      { socketPath: '/new.sock', state: 'pending', attempts: 0 },
    ]);
    await waiting;
    assert.equal(done, true, 'a pending socket that was not restored does not hold it back');
    assert.equal(h.listeners.size, 0);
    assert.equal(clock.pendingTimers, 0);
  });

  it('gives up after the timeout', async () => {
    const clock = new FakeClock();
    const h = harness([{ socketPath: '/a.sock', state: 'pending', attempts: 0 }]);
    let done = false;
    const waiting = waitForRestoredSockets({
      ...h,
      restored: new Set(['/a.sock']),
      clock,
      timeoutMs: 5000,
    }).then(() => (done = true));
    await clock.advance(4999);
    assert.equal(done, false);
    await clock.advance(1);
    await waiting;
    assert.equal(done, true);
  });

  it('stops waiting when aborted', async () => {
    const clock = new FakeClock();
    const h = harness([{ socketPath: '/a.sock', state: 'pending', attempts: 0 }]);
    const abort = new AbortController();
    const waiting = waitForRestoredSockets({
      ...h,
      restored: new Set(['/a.sock']),
      clock,
      timeoutMs: 5000,
      signal: abort.signal,
    });
    abort.abort();
    await waiting;
    assert.equal(clock.pendingTimers, 0);
    assert.equal(h.listeners.size, 0);
  });

  it('does not wait when nothing was restored', async () => {
    const h = harness([{ socketPath: '/a.sock', state: 'pending', attempts: 0 }]);
    await waitForRestoredSockets({ ...h, restored: new Set(), clock: new FakeClock(), timeoutMs: 5000 });
    assert.equal(h.listeners.size, 0);
  });
});
