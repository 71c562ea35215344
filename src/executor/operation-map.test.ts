import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { BerthError, isBerthError, silentLogger } from '../common/index.js';
import { FakeClock, settle, waitFor } from '../testing/index.js';
import { createOperationMap, type OperationMap, type OperationOutcome } from './operation-map.js';

interface Deferred {
  promise: Promise<void>;
  resolve: () => void;
  reject: (err: unknown) => void;
}

function deferred(): Deferred {
  let resolve!: () => void;
  let reject!: (err: unknown) => void;
  const promise = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

function settledOnce(map: OperationMap, key: string): Promise<OperationOutcome> {
  return new Promise((resolve) => {
    const off = map.onSettled((o) => {
      if (o.key !== key) return;
      off();
      resolve(o);
    });
  });
}

function refusalCode(fn: () => void): string | undefined {
  try {
    fn();
    return undefined;
  } catch (err) {
    return isBerthError(err) ? err.code : 'not-a-berth-error';
  }
}

for (const backoff of [true, false]) {
  describe(`operation map (backoff ${backoff ? 'on' : 'off'})`, () => {
    const make = () => createOperationMap({ clock: new FakeClock(), logger: silentLogger, backoff });

    it('runs a single operation and forgets it on success', async () => {
      const map = make();
      let ran = 0;
      const done = settledOnce(map, 'a');
      map.run('a', async () => {
        ran++;
      });
      const outcome = await done;
      assert.equal(ran, 1);
      assert.equal(outcome.error, undefined);
      assert.equal(map.status('a'), undefined);
    });

    it('runs operations with different names concurrently', async () => {
      const map = make();
      const a = deferred();
      const b = deferred();
      const started: string[] = [];
      map.run('a', () => {
        started.push('a');
        return a.promise;
      });
      map.run('b', () => {
        started.push('b');
        return b.promise;
      });
      assert.deepEqual(started, ['a', 'b']);
      assert.ok(map.isPending('a') && map.isPending('b'));
      a.resolve();
      b.resolve();
      await map.wait();
    });

    it('refuses a second operation with the same name while the first runs, then accepts a third', async () => {
      const map = make();
      const first = deferred();
      let secondRan = false;
      map.run('same', () => first.promise);
      let refusal: unknown;
      try {
        map.run('same', async () => {
          secondRan = true;
        });
      } catch (err) {
        refusal = err;
      }
      assert.ok(isBerthError(refusal, 'BERTH_OPERATION_PENDING'));
      assert.equal(
        refusal.message,
        'Failed to create operation with name "same". An operation with that name is already executing.',
      );
      await settle();
      assert.equal(secondRan, false);
      first.resolve();
      await map.waitForCompletion();
      let thirdRan = false;
      const done = settledOnce(map, 'same');
      map.run('same', async () => {
        thirdRan = true;
      });
      await done;
      assert.equal(thirdRan, true);
    });

    it('contains a synchronous throw and a rejection as failures', async () => {
      const map = make();
      const first = settledOnce(map, 'panic');
      map.run('panic', () => {
        throw new TypeError('panic: nil map');
      });
      const outcome = await first;
      assert.ok(isBerthError(outcome.error, 'BERTH_INTERNAL'));
      assert.match(outcome.error.message, /panic: nil map/);
      const second = settledOnce(map, 'reject');
      map.run('reject', () => Promise.reject(new BerthError('BERTH_DIAL_FAILED', 'refused')));
      assert.equal((await second).error?.code, 'BERTH_DIAL_FAILED');
    });

    it('wait() on an empty map returns at once and otherwise waits for the running operation', async () => {
      const map = make();
      await map.wait();
      const op = deferred();
      map.run('x', () => op.promise);
      let waited = false;
      const waiting = map.wait().then(() => {
        waited = true;
      });
      await settle();
      assert.equal(waited, false);
      op.resolve();
      await waiting;
      assert.equal(waited, true);
    });

    it('stop() aborts running operations and refuses new ones; it is idempotent', async () => {
      const map = make();
      map.run(
        'long',
        (signal) => new Promise((_, reject) => signal.addEventListener('abort', () => reject(signal.reason))),
      );
      map.stop();
      map.stop();
      await map.waitForCompletion();
      assert.equal(
        refusalCode(() => map.run('new', async () => {})),
        'BERTH_SHUT_DOWN',
      );
    });
  });
}

describe('operation map backoff', () => {
  it('refuses a rerun until 500 ms after the failure, then permits it; the window doubles and caps at 122 s', async () => {
    const clock = new FakeClock();
    const map = createOperationMap({ clock, logger: silentLogger, backoff: true });
    const fail = async () => {
      const done = settledOnce(map, 'k');
      map.run('k', () => Promise.reject(new Error('boom')));
      return done;
    };

    const first = await fail();
    assert.equal(first.retryAt, clock.now() + 500);
    assert.equal(first.attempts, 1);
    await clock.advance(500);
    assert.equal(
      refusalCode(() => map.run('k', async () => {})),
      'BERTH_OPERATION_BACKOFF',
    );
    await clock.advance(1);

    const windows = [1_000, 2_000, 4_000, 8_000, 16_000, 32_000, 64_000, 122_000, 122_000];
    for (const window of windows) {
      const outcome = await fail();
      assert.equal(outcome.retryAt, clock.now() + window);
      const status = map.status('k');
      assert.equal(status?.pending, false);
      assert.equal(status?.lastError?.message, 'operation "k" failed: boom');
      assert.equal(status?.retryAt, clock.now() + window);
      await clock.advance(window);
      let refusal: unknown;
      try {
        map.run('k', async () => {});
      } catch (err) {
        refusal = err;
      }
      assert.ok(isBerthError(refusal, 'BERTH_OPERATION_BACKOFF'));
      assert.equal(refusal.details.retryAt, clock.now());
      await clock.advance(1);
    }
    assert.equal(map.status('k')?.attempts, 10);

    const ok = settledOnce(map, 'k');
    map.run('k', async () => {});
    assert.equal((await ok).error, undefined);
    assert.equal(map.status('k'), undefined, 'success clears the entry and its backoff');
    const again = await fail();
    assert.equal(again.retryAt, clock.now() + 500, 'a failure after success starts again at 500 ms');
  });

  it('a panicking operation starts the backoff; a later run with the same name succeeds', async () => {
    const clock = new FakeClock();
    const map = createOperationMap({ clock, logger: silentLogger, backoff: true });
    const failed = settledOnce(map, 'p');
    map.run('p', () => {
      throw new Error('panic');
    });
    await failed;
    assert.equal(
      refusalCode(() => map.run('p', async () => {})),
      'BERTH_OPERATION_BACKOFF',
    );
    await clock.advance(501);
    const ok = settledOnce(map, 'p');
    map.run('p', async () => {});
    assert.equal((await ok).error, undefined);
  });

  it('a different generation starts with a fresh backoff; the same generation keeps it', async () => {
    const clock = new FakeClock();
    const map = createOperationMap({ clock, logger: silentLogger, backoff: true });
    for (let i = 0; i < 5; i++) {
      const done = settledOnce(map, '/s.sock');
      map.run('/s.sock', () => Promise.reject(new Error('connection refused')), { generation: 'stale' });
      await done;
      await clock.set((map.status('/s.sock')?.retryAt ?? 0) + 1);
    }
    const done = settledOnce(map, '/s.sock');
    map.run('/s.sock', () => Promise.reject(new Error('connection refused')), { generation: 'stale' });
    await done;
    assert.equal(map.status('/s.sock')?.retryAt, clock.now() + 16_000);
    assert.equal(
      refusalCode(() => map.run('/s.sock', async () => {}, { generation: 'stale' })),
      'BERTH_OPERATION_BACKOFF',
    );
    const live = settledOnce(map, '/s.sock');
    map.run('/s.sock', async () => {}, { generation: 'live' });
    const outcome = await live;
    assert.equal(outcome.error, undefined);
    assert.equal(outcome.attempts, 1, 'attempts restart with the new generation');
    assert.equal(outcome.generation, 'live');
  });

  it('resetBackoff() permits an immediate rerun; it does nothing for a running key', async () => {
    const clock = new FakeClock();
    const map = createOperationMap({ clock, logger: silentLogger, backoff: true });
    const failed = settledOnce(map, 'k');
    map.run('k', () => Promise.reject(new Error('no handler')));
    await failed;
    assert.equal(map.resetBackoff('k'), true);
    const op = deferred();
    map.run('k', () => op.promise);
    assert.equal(map.resetBackoff('k'), false);
    op.resolve();
    await map.wait();
  });

  it('wait() blocks while an entry sits in backoff; waitForCompletion() does not', async () => {
    const clock = new FakeClock();
    const map = createOperationMap({ clock, logger: silentLogger, backoff: true });
    const failed = settledOnce(map, 'k');
    map.run('k', () => Promise.reject(new Error('x')));
    await failed;
    await map.waitForCompletion();
    let emptied = false;
    const waiting = map.wait().then(() => {
      emptied = true;
    });
    await settle();
    assert.equal(emptied, false);
    map.resetBackoff('k');
    await waiting;
    await waitFor('wait() to resolve', () => emptied);
  });

  it('without backoff a failed key can be rerun at once', async () => {
    const map = createOperationMap({ clock: new FakeClock(), logger: silentLogger, backoff: false });
    const failed = settledOnce(map, 'k');
    map.run('k', () => Promise.reject(new Error('x')));
    assert.ok((await failed).error);
    assert.equal(map.status('k'), undefined);
    const ok = settledOnce(map, 'k');
    map.run('k', async () => {});
    assert.equal((await ok).error, undefined);
  });
});
