import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Fifo } from './fifo.js';

test('Fifo keeps arrival order through pushes and shifts past its compaction point', () => {
  const queue = new Fifo<number>();
  assert.equal(queue.shift(), undefined);
  const out: number[] = [];
  let next = 0;
  // Interleaved, so the consumed prefix grows past 1,024 while items remain.
  for (let round = 0; round < 3_000; round++) {
    queue.push(next++);
    queue.push(next++);
    out.push(queue.shift() as number);
  }
  assert.equal(queue.size, 3_000);
  while (queue.size > 0) out.push(queue.shift() as number);
  assert.deepEqual(
    out,
    Array.from({ length: 6_000 }, (_, i) => i),
  );
  assert.equal(queue.shift(), undefined);
});
