import { type BackoffPolicy, BerthError, errorMessage, nextBackoffMs } from '../common/index.js';
import { DEFAULT_EXECUTOR_BACKOFF } from './executor-options.js';

/**
 * Per-key exponential backoff (kubelet `goroutinemap/exponentialbackoff`).
 * The first failure forbids retries for 500 ms; each further failure doubles
 * the window, capped at 2m2s: 0.5, 1, 2, 4, ... 64, 122, 122 s.
 */
export const INITIAL_DURATION_BEFORE_RETRY_MS = DEFAULT_EXECUTOR_BACKOFF.initialMs;
export const MAX_DURATION_BEFORE_RETRY_MS = DEFAULT_EXECUTOR_BACKOFF.maxMs;

export class ExponentialBackoff {
  lastError: unknown = undefined;
  /** Milliseconds since the epoch of the last failure; 0 before any failure. */
  lastErrorTime = 0;
  durationBeforeRetryMs = 0;
  readonly #policy: BackoffPolicy;

  constructor(policy: BackoffPolicy = DEFAULT_EXECUTOR_BACKOFF) {
    this.#policy = policy;
  }

  /** Records a failure at `now` and widens the window. */
  update(error: unknown, now: number): void {
    this.durationBeforeRetryMs = nextBackoffMs(this.#policy, this.durationBeforeRetryMs);
    this.lastError = error;
    this.lastErrorTime = now;
  }

  /** When the window ends. A retry is permitted only strictly after this instant (upstream uses `<=`). */
  get retryAt(): number {
    return this.lastErrorTime + this.durationBeforeRetryMs;
  }

  /** True while a retry is not permitted at `now` (cheap: no error is built). */
  refuses(now: number): boolean {
    return this.durationBeforeRetryMs !== 0 && now - this.lastErrorTime <= this.durationBeforeRetryMs;
  }

  /** Undefined when a retry is permitted at `now`, else the upstream backoff refusal. */
  refusal(operationName: string, now: number): BerthError | undefined {
    if (!this.refuses(now)) return undefined;
    const lastError = errorMessage(this.lastError);
    return new BerthError(
      'BERTH_OPERATION_BACKOFF',
      `Failed to create operation with name ${JSON.stringify(operationName)}. An operation with that name ` +
        `failed at ${formatTime(this.lastErrorTime)}. No retries permitted until ` +
        `${formatTime(this.retryAt)} (${formatDuration(this.durationBeforeRetryMs)}). ` +
        `Last error: ${JSON.stringify(lastError)}.`,
      {
        cause: this.lastError,
        details: {
          operationName,
          retryAt: this.retryAt,
          lastErrorAt: this.lastErrorTime,
          durationBeforeRetryMs: this.durationBeforeRetryMs,
          lastError,
        },
      },
    );
  }

  /** The upstream log line for a failure that just started a window. */
  noRetriesPermittedMessage(operationName: string): string {
    return (
      `Operation for ${JSON.stringify(operationName)} failed. No retries permitted until ` +
      `${formatTime(this.retryAt)} (durationBeforeRetry ${formatDuration(this.durationBeforeRetryMs)}). ` +
      `Error: ${JSON.stringify(errorMessage(this.lastError))}`
    );
  }
}

export function formatTime(ms: number): string {
  return new Date(ms).toISOString();
}

/** Go's time.Duration String() for the durations berth prints: 500ms, 1s, 1m4s, 2m2s, 1.5s. */
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${ms}ms`;
  const hours = Math.floor(ms / 3_600_000);
  const minutes = Math.floor((ms % 3_600_000) / 60_000);
  const seconds = (ms % 60_000) / 1000;
  let out = '';
  if (hours > 0) out += `${hours}h`;
  if (hours > 0 || minutes > 0) out += `${minutes}m`;
  return `${out}${Number(seconds.toFixed(3))}s`;
}
