import type { NodeRecord, PluginRecord } from './cluster-values.js';

/**
 * What the cluster reader reports: changes of the fleet's visible state, and
 * of the reader's own freshness. `revision` is the etcd revision the change
 * happened at (for a re-list, the revision of the list), so replaying events
 * in order rebuilds the view.
 */
export type ClusterEvent =
  | { type: 'node-added'; revision: string; node: ClusterNode }
  | { type: 'node-updated'; revision: string; node: ClusterNode; previous: ClusterNode }
  | { type: 'node-removed'; revision: string; node: ClusterNode }
  | { type: 'plugin-added'; revision: string; plugin: ClusterPlugin }
  | { type: 'plugin-updated'; revision: string; plugin: ClusterPlugin; previous: ClusterPlugin }
  | { type: 'plugin-removed'; revision: string; plugin: ClusterPlugin }
  /** The reader could not confirm it sees the quorum's data for `staleAfterMs`; the view is kept. */
  | { type: 'stale'; revision: string; at: number; reason: string }
  /** The reader reached the quorum again (after a re-list). */
  | { type: 'fresh'; revision: string; at: number }
  /** The reader re-listed (compaction, watch error, stalled progress, recovery); differences follow as events. */
  | { type: 'relisted'; revision: string; at: number; reason: string };

export interface ClusterNode extends NodeRecord {
  /** The node key's etcd key, mod revision (the writer's fencing token) and lease. */
  key: string;
  modRevision: string;
}

export interface ClusterPlugin extends PluginRecord {
  key: string;
  modRevision: string;
  lease: string;
}

/** What the writer reports about its own publishing. */
export type ClusterWriterEvent =
  | { type: 'lease'; at: number; state: LeaseState; lease?: string }
  | { type: 'conflict'; at: number; node: string; holder: string; message: string }
  | { type: 'published'; at: number; puts: number; deletes: number; latencyMs: number };

/**
 * The writer's lease: `none` before the first grant, `held` while renewals
 * succeed, `unknown` while renewals fail (etcd unreachable; the lease may
 * still live), `lost` once etcd said it is gone (a new one is being granted),
 * `conflict` while another instance owns the node name, `revoked` or
 * `released` after stop.
 */
export type LeaseState = 'none' | 'held' | 'unknown' | 'lost' | 'conflict' | 'revoked' | 'released';
