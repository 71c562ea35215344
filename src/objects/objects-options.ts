/**
 * Every default of the object manager, once. The daemon's config defaults
 * import these (through this light module: constants only, no code), and a
 * test ties the two together.
 */
import type { BackoffPolicy } from '../common/index.js';

/** The kubelet's configMapAndSecretChangeDetectionStrategy. */
export type ChangeDetectionStrategy = 'Get' | 'Cache' | 'Watch';
export const CHANGE_DETECTION_STRATEGIES: readonly ChangeDetectionStrategy[] = ['Get', 'Cache', 'Watch'];
export const DEFAULT_CHANGE_DETECTION_STRATEGY: ChangeDetectionStrategy = 'Watch';

/** Cache strategy: how long a fetched object is served before the next GET (kubelet: 1 min). */
export const DEFAULT_OBJECT_TTL_MS = 60_000;
/** Watch strategy: the kubelet's resync period; idle watches stop after 5 × this (at least MIN_IDLE_TIME_MS). */
export const DEFAULT_RESYNC_INTERVAL_MS = 60_000;
/** maxIdleTime is never below this (upstream minIdleTime). */
export const MIN_IDLE_TIME_MS = 60_000;
/** How often the watch store looks for idle watches. */
export const RECYCLE_INTERVAL_MS = 60_000;
/** How long a get waits for an object's first list (upstream: 1 s). */
export const DEFAULT_SYNC_TIMEOUT_MS = 1_000;
/** How often a frozen immutable object is re-checked against the source on access. */
export const DEFAULT_IMMUTABLE_RECHECK_MS = 60_000;
/** The reflector's relist backoff: client-go's 800 ms doubling to 30 s. */
export const DEFAULT_REFLECTOR_BACKOFF: BackoffPolicy = { initialMs: 800, maxMs: 30_000, factor: 2 };
/** A list+watch cycle that lasted this long counts as healthy: the next failure backs off from the start. */
export const REFLECTOR_BACKOFF_RESET_MS = 120_000;

/** Pods registered at once (the kubelet's default maxPods); one more is refused. */
export const DEFAULT_MAX_PODS = 110;
/** Distinct secrets and configmaps one pod may reference; each costs a watch or cache entry. */
export const DEFAULT_MAX_REFERENCES_PER_POD = 256;
/** Largest pod document accepted (bytes of JSON); Kubernetes stores objects up to 1.5 MiB. */
export const DEFAULT_MAX_POD_BYTES = 1024 * 1024;

/** The object manager's defaults as one record (what the daemon's config defaults import). */
export const OBJECT_DEFAULTS = {
  strategy: DEFAULT_CHANGE_DETECTION_STRATEGY,
  ttlMs: DEFAULT_OBJECT_TTL_MS,
  resyncIntervalMs: DEFAULT_RESYNC_INTERVAL_MS,
  syncTimeoutMs: DEFAULT_SYNC_TIMEOUT_MS,
  immutableRecheckMs: DEFAULT_IMMUTABLE_RECHECK_MS,
  reflectorBackoff: DEFAULT_REFLECTOR_BACKOFF,
} as const;
