import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { formatDuration, parseDuration } from './duration.js';

describe('durations', () => {
  it('reads Go-style strings and millisecond numbers', () => {
    const cases: Array<[string | number, number]> = [
      ['500ms', 500],
      ['10s', 10_000],
      ['2m', 120_000],
      ['1h', 3_600_000],
      ['1m30s', 90_000],
      ['1.5s', 1500],
      [' 250ms ', 250],
      ['750', 750],
      [0, 0],
      [1234, 1234],
    ];
    for (const [input, ms] of cases) assert.equal(parseDuration(input), ms, JSON.stringify(input));
  });

  it('rejects what it cannot read', () => {
    for (const input of [
      '',
      'abc',
      '10x',
      's',
      '-5s',
      '1m-3s',
      '5 s',
      -1,
      Number.NaN,
      Number.POSITIVE_INFINITY,
    ]) {
      assert.equal(parseDuration(input), undefined, JSON.stringify(input));
    }
  });

  it('formats milliseconds compactly', () => {
    assert.equal(formatDuration(500), '500ms');
    assert.equal(formatDuration(10_000), '10s');
    assert.equal(formatDuration(90_000), '1m30s');
    assert.equal(formatDuration(3_600_000), '1h');
    assert.equal(formatDuration(1500), '1500ms');
  });
});
