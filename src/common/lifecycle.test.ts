import assert from 'node:assert/strict';
import { test } from 'node:test';
import { backoffDelayMs, backoffProblem, nextBackoffMs } from './backoff.js';
import { LifecycleController } from './lifecycle.js';

test('lifecycle: start, double stop, dispose after stop, and stop before start', async () => {
  const calls: string[] = [];
  const c = new LifecycleController({
    onStart: () => void calls.push('start'),
    onStop: () => void calls.push('stop'),
  });
  assert.equal(c.state, 'new');
  await c.start();
  assert.equal(c.state, 'running');
  const a = c.stop();
  assert.equal(c.stop(), a, 'stop is memoised');
  await a;
  await c[Symbol.asyncDispose]();
  assert.equal(c.state, 'stopped');
  assert.deepEqual(calls, ['start', 'stop']);

  const never = new LifecycleController({ onStop: () => void calls.push('stop2') });
  await never.stop();
  assert.equal(never.state, 'stopped');
  await assert.rejects(never.start(), /stopped/);
});

test('lifecycle: a failing start stops the component and rethrows; an abort signal stops it', async () => {
  let stopped = 0;
  const c = new LifecycleController({
    onStart: () => {
      throw new Error('boom');
    },
    onStop: () => void stopped++,
  });
  await assert.rejects(c.start(), /boom/);
  assert.equal(c.state, 'stopped');
  assert.equal(stopped, 1);

  const ac = new AbortController();
  const d = new LifecycleController({ onStop: () => void stopped++ });
  await d.start(ac.signal);
  ac.abort();
  await d.stop();
  assert.equal(d.state, 'stopped');
  assert.equal(stopped, 2);
});

test('backoff policy: grows by factor, caps at max, false means none', () => {
  const p = { initialMs: 500, maxMs: 122_000, factor: 2 };
  assert.deepEqual(
    [1, 2, 3, 9, 10, 50].map((n) => backoffDelayMs(p, n)),
    [500, 1000, 2000, 122_000, 122_000, 122_000],
  );
  assert.equal(backoffDelayMs(false, 3), 0);
  assert.equal(nextBackoffMs(p, 0), 500);
  assert.equal(nextBackoffMs(p, 100_000), 122_000);
  assert.equal(backoffProblem(p), undefined);
  assert.match(backoffProblem({ initialMs: 0, maxMs: 1, factor: 2 }) ?? '', /initialMs/);
  assert.match(backoffProblem({ initialMs: 5, maxMs: 1, factor: 2 }) ?? '', /maxMs/);
  assert.match(backoffProblem({ initialMs: 5, maxMs: 10, factor: 0.5 }) ?? '', /factor/);
});
