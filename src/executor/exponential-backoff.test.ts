import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isBerthError } from '../common/index.js';
import {
  ExponentialBackoff,
  formatDuration,
  INITIAL_DURATION_BEFORE_RETRY_MS,
  MAX_DURATION_BEFORE_RETRY_MS,
} from './exponential-backoff.js';

describe('ExponentialBackoff', () => {
  it('uses the upstream constants: 500 ms initial, 2m2s cap', () => {
    assert.equal(INITIAL_DURATION_BEFORE_RETRY_MS, 500);
    assert.equal(MAX_DURATION_BEFORE_RETRY_MS, 122_000);
  });

  it('permits anything before the first failure', () => {
    assert.equal(new ExponentialBackoff().refusal('op', 0), undefined);
  });

  it('doubles from 500 ms and caps at 122 s', () => {
    const backoff = new ExponentialBackoff();
    const seen: number[] = [];
    for (let i = 0; i < 11; i++) {
      backoff.update(new Error('boom'), 1_000);
      seen.push(backoff.durationBeforeRetryMs);
    }
    assert.deepEqual(
      seen,
      [500, 1_000, 2_000, 4_000, 8_000, 16_000, 32_000, 64_000, 122_000, 122_000, 122_000],
    );
  });

  it('refuses inside the window, boundary included (<=), and permits after it', () => {
    const backoff = new ExponentialBackoff();
    backoff.update(new Error('dial refused'), 10_000);
    const refusal = backoff.refusal('/p.sock', 10_500);
    assert.ok(isBerthError(refusal, 'BERTH_OPERATION_BACKOFF'));
    assert.equal(refusal.details.retryAt, 10_500);
    assert.equal(refusal.details.lastError, 'dial refused');
    assert.match(
      refusal.message,
      /^Failed to create operation with name "\/p\.sock"\. An operation with that name failed at \S+\. No retries permitted until \S+ \(500ms\)\. Last error: "dial refused"\.$/,
    );
    assert.equal(backoff.refusal('/p.sock', 10_501), undefined);
  });

  it('formats durations like Go', () => {
    assert.equal(formatDuration(500), '500ms');
    assert.equal(formatDuration(1_000), '1s');
    assert.equal(formatDuration(1_500), '1.5s');
    assert.equal(formatDuration(64_000), '1m4s');
    assert.equal(formatDuration(122_000), '2m2s');
  });
});
