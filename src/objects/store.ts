/**
 * The Store contract shared by the TTL store (Cache strategy) and the watch
 * store (Watch strategy): reference-counted interest in objects plus a read.
 * addReference/deleteReference never block on the source (the kubelet calls
 * them from pod sync); only get() may wait.
 */
import type { KubeObject } from './source.js';

export interface Store {
  /** One more reference from `podUid`. Adding several times counts several references. */
  addReference(namespace: string, name: string, podUid: string): void;
  /** Drops one reference; the object is forgotten when its last reference goes. A missing one is a no-op. */
  deleteReference(namespace: string, name: string, podUid: string): void;
  /**
   * The object, or a BerthError: BERTH_OBJECT_NOT_REGISTERED when nothing references it,
   * BERTH_OBJECT_NOT_FOUND when the source does not have it, BERTH_CACHE_SYNC_TIMEOUT (watch store).
   * Treat the result as read-only: it may be the cached copy.
   */
  get(namespace: string, name: string): Promise<KubeObject>;
}
