import type { BackoffSetting } from '../common/index.js';

/**
 * Defaults of the cluster view (writer and reader), kept in one place. The
 * config schema and the tests import these; nothing else repeats a number.
 */
export const CLUSTER_DEFAULTS = {
  /** Root of every key berth writes to etcd; nodes/ and plugins/ live under it. */
  prefix: '/berth/v1/',
  /** Lease TTL of a daemon. Its entries vanish this long after it stops renewing (crash, partition). */
  leaseTtlSeconds: 15,
  /** Retry policy for granting, publishing and re-claiming after a failure. */
  backoff: { initialMs: 1_000, maxMs: 30_000, factor: 2 } as BackoffSetting,
  /** Operations per guarded transaction (etcd's default --max-txn-ops is 128). */
  maxOpsPerTxn: 120,
  /** Keys per page of the reader's list. */
  pageSize: 500,
  /** The reader's linearizable probe that notices a cut-off member. */
  probeIntervalMs: 10_000,
  /** No successful probe for this long marks the view stale (default: the lease TTL). */
  staleAfterMs: 15_000,
  /** No watch data or progress notification for this long re-lists (3 × etcd's recommended 5 s interval). */
  progressTimeoutMs: 15_000,
  /** Deadline of a unary etcd call (wall-clock, as gRPC needs). */
  callTimeoutMs: 5_000,
  /** Bound on one published value (etcd's request limit is 1.5 MiB). */
  maxValueBytes: 64 * 1024,
} as const;

/** How berth connects to etcd: shared by the cluster view and the object manager's etcd source. */
export interface EtcdConnectionSettings {
  endpoints: string[];
  /** PEM files; `ca` alone gives server-verified TLS, with `cert` and `key` mutual TLS. */
  tls?: { ca: string; cert?: string; key?: string };
  /** etcd user and password (etcd's auth must be enabled on the server). */
  auth?: { username: string; password: string };
}
