import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { formatConfigDuration, parseDuration } from './duration.js';

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
    assert.equal(formatConfigDuration(500), '500ms');
    assert.equal(formatConfigDuration(10_000), '10s');
    assert.equal(formatConfigDuration(90_000), '1m30s');
    assert.equal(formatConfigDuration(3_600_000), '1h');
    assert.equal(formatConfigDuration(1500), '1500ms');
  });
});
