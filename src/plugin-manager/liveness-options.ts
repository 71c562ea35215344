import type { BackoffPolicy } from '../common/index.js';
import type { LivenessOptions } from './types.js';

/**
 * Liveness defaults, in one place. A registered plugin holds one idle HTTP/2
 * connection: its close is noticed at once, and a keepalive ping (at most
 * `pingsPerPeriod` per period, round-robin) finds a plugin that is stopped or
 * wedged with its connection still open.
 */
export const DEFAULT_LIVENESS: Readonly<Required<LivenessOptions>> = Object.freeze({
  periodMs: 10_000,
  timeoutMs: 5_000,
  failureThreshold: 3,
  pingsPerPeriod: 1_000,
});

/** A dead socket is re-probed after one period, then the interval doubles up to this many periods. */
export const RECOVERY_MAX_PERIODS = 32;

/** The recovery probes' backoff for a liveness period: one period doubling to RECOVERY_MAX_PERIODS (the upstream monitor's). */
export function recoveryBackoff(periodMs: number): BackoffPolicy {
  return { initialMs: periodMs, maxMs: periodMs * RECOVERY_MAX_PERIODS, factor: 2 };
}
