/**
 * The one backoff policy type of berth. Every component that retries (the
 * operation executor, liveness recovery, the reflector, the registry's wait
 * poll, the watch store, the cluster writer) takes a `BackoffSetting` in its
 * options, so a single config key can reach each of them.
 *
 * `false` means "no backoff": retry at the next opportunity.
 */
export interface BackoffPolicy {
  /** The first delay after a failure, in milliseconds (> 0). */
  initialMs: number;
  /** The largest delay, in milliseconds (>= initialMs). */
  maxMs: number;
  /** Growth per consecutive failure (>= 1); 2 doubles. */
  factor: number;
}

export type BackoffSetting = BackoffPolicy | false;

/**
 * The delay before retry number `failures` (1 = after the first failure):
 * initialMs · factor^(failures-1), capped at maxMs. 0 for `false` or no failure.
 */
export function backoffDelayMs(setting: BackoffSetting, failures: number): number {
  if (setting === false || failures <= 0) return 0;
  const raw = setting.initialMs * setting.factor ** (failures - 1);
  return Math.min(Number.isFinite(raw) ? raw : setting.maxMs, setting.maxMs);
}

/** The delay that follows `previousMs` (0 before the first failure). */
export function nextBackoffMs(setting: BackoffSetting, previousMs: number): number {
  if (setting === false) return 0;
  if (previousMs <= 0) return setting.initialMs;
  return Math.min(previousMs * setting.factor, setting.maxMs);
}

/** A policy's own sanity check; returns a problem text naming the field, or undefined. */
export function backoffProblem(setting: BackoffSetting): string | undefined {
  if (setting === false) return undefined;
  const { initialMs, maxMs, factor } = setting;
  if (!(Number.isFinite(initialMs) && initialMs > 0))
    return `initialMs must be a positive number (got ${initialMs})`;
  if (!(Number.isFinite(maxMs) && maxMs >= initialMs))
    return `maxMs must be at least initialMs (got ${maxMs})`;
  if (!(Number.isFinite(factor) && factor >= 1)) return `factor must be at least 1 (got ${factor})`;
  return undefined;
}
