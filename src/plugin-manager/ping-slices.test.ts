import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MIN_SLICE_INTERVAL_MS, PINGS_PER_SLICE, pingSliceCount, pingSliceShare } from './ping-slices.js';

describe('liveness ping slices', () => {
  it('one slice up to PINGS_PER_SLICE pings, then as many as keep each slice within it', () => {
    assert.equal(pingSliceCount(0, 10_000), 1);
    assert.equal(pingSliceCount(1, 10_000), 1);
    assert.equal(pingSliceCount(PINGS_PER_SLICE, 10_000), 1);
    assert.equal(pingSliceCount(PINGS_PER_SLICE + 1, 10_000), 2);
    assert.equal(pingSliceCount(227, 10_000), 3);
    assert.equal(pingSliceCount(1_000, 10_000), 10);
  });

  it('slices stay MIN_SLICE_INTERVAL_MS apart: a short period or a large budget gets fewer, larger slices', () => {
    assert.equal(pingSliceCount(5_000, 10_000), 10_000 / MIN_SLICE_INTERVAL_MS);
    assert.equal(pingSliceCount(1_000, 3_000), 3_000 / MIN_SLICE_INTERVAL_MS);
    assert.equal(pingSliceCount(1_000, 500), 1, 'a period shorter than the interval is one slice');
  });

  it("shares add up to the budget, each within one of the others, every plugin's ping in exactly one slice", () => {
    for (const [budget, periodMs] of [
      [0, 10_000],
      [7, 10_000],
      [33, 10_000],
      [227, 10_000],
      [1_000, 10_000],
      [999, 1_000],
      [5_000, 10_000],
    ] as const) {
      const slices = pingSliceCount(budget, periodMs);
      const shares = Array.from({ length: slices }, (_, i) => pingSliceShare(budget, slices, i));
      assert.equal(
        shares.reduce((a, b) => a + b, 0),
        budget,
        `budget ${budget} in ${slices} slices`,
      );
      assert.ok(Math.max(...shares) - Math.min(...shares) <= 1, `even shares: ${shares.join(',')}`);
      if (slices < periodMs / MIN_SLICE_INTERVAL_MS) assert.ok(Math.max(...shares) <= PINGS_PER_SLICE);
    }
  });
});
