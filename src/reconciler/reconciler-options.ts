/** The reconciler's defaults, in one place (the plugin manager and the daemon's config import them). */

/**
 * The full pass is only a safety net: every desired-state change, settled
 * operation and backoff deadline wakes the work for its own socket path.
 */
export const DEFAULT_RESYNC_PERIOD_MS = 10_000;

export const DEFAULT_RECONCILER_OPTIONS = Object.freeze({
  resyncPeriodMs: DEFAULT_RESYNC_PERIOD_MS,
});
