import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AsyncQueue } from './async-queue.js';
import { isBerthError } from './errors.js';

async function drain<T>(queue: AsyncQueue<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of queue) out.push(item);
  return out;
}

describe('AsyncQueue', () => {
  it('delivers pushed items in order, then ends on close', async () => {
    const q = new AsyncQueue<number>();
    q.push(1);
    q.push(2);
    const done = drain(q);
    q.push(3);
    q.close();
    assert.deepEqual(await done, [1, 2, 3]);
    assert.equal(q.push(4), false, 'push after close is refused');
  });

  it('replaces dropped items with a lag marker when bounded with lagItem', async () => {
    const q = new AsyncQueue<string>({ maxSize: 2, lagItem: (n) => `lagged:${n}` });
    for (const s of ['a', 'b', 'c', 'd']) q.push(s);
    q.close();
    assert.deepEqual(await drain(q), ['lagged:2', 'c', 'd']);
  });

  it('ends the stream with BERTH_SUBSCRIBER_LAGGED when bounded without lagItem', async () => {
    const q = new AsyncQueue<number>({ maxSize: 1 });
    q.push(1);
    assert.equal(q.push(2), false);
    const seen: number[] = [];
    await assert.rejects(
      (async () => {
        for await (const n of q) seen.push(n);
      })(),
      (err) => isBerthError(err, 'BERTH_SUBSCRIBER_LAGGED'),
    );
    assert.deepEqual(seen, [1], 'items before the overflow are still delivered');
  });

  it('calls onClose once when the consumer breaks out', async () => {
    let closes = 0;
    const q = new AsyncQueue<number>({ onClose: () => closes++ });
    q.push(1);
    q.push(2);
    for await (const _ of q) break;
    q.close();
    assert.equal(closes, 1);
    assert.equal(q.closed, true);
  });

  it('never blocks the producer on a consumer that does not read', () => {
    const q = new AsyncQueue<number>();
    for (let i = 0; i < 10_000; i++) assert.equal(q.push(i), true);
    assert.equal(q.size, 10_000);
  });
});
