import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, it } from 'node:test';
import { getHeapStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { flatString } from './flat-string.js';

/** Heap bytes held per string by `count` strings made by `make`, after full collections. */
function retainedPerString(count: number, make: () => string): number {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  const kept: string[] = new Array(count);
  gc();
  gc();
  const before = getHeapStatistics().used_heap_size;
  for (let i = 0; i < count; i++) kept[i] = make();
  gc();
  gc();
  const per = (getHeapStatistics().used_heap_size - before) / count;
  assert.equal(kept.length, count);
  return per;
}

describe('flatString', () => {
  it('never changes the value, white space at either end included', () => {
    for (const value of [
      '',
      'a',
      ` ${'x'.repeat(40)}`,
      `${'y'.repeat(40)}\n`,
      randomUUID(),
      `${'1'.repeat(20)}:${'2'.repeat(20)}`,
    ])
      assert.equal(flatString(value), value);
  });

  it('keeps a UUID in one flat string, not the tree of cells randomUUID() built it from', () => {
    const built = retainedPerString(20_000, () => randomUUID());
    const flat = retainedPerString(20_000, () => flatString(randomUUID()));
    // 36 one-byte characters and a header: under 100 bytes; as built, several hundred.
    assert.ok(flat < 100, `a flattened UUID holds ${flat.toFixed(0)} bytes`);
    assert.ok(built > 2 * flat, `as built ${built.toFixed(0)} bytes, flattened ${flat.toFixed(0)}`);
  });
});
