/**
 * The "apiserver" behind the object stores: one small interface that the
 * directory, etcd and Kubernetes sources implement, and that the TTL store
 * (get) and the watch store (list + watch) consume.
 */
import type { Lifecycle } from '../common/index.js';
export type ObjectResource = 'secrets' | 'configmaps';

export interface ObjectMeta {
  name: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  [key: string]: unknown;
}

/** A Kubernetes-shaped object: Secret or ConfigMap (kind, metadata, data, immutable, ...). */
export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
  immutable?: boolean;
  data?: Record<string, string>;
  [key: string]: unknown;
}

export interface ObjectList {
  items: KubeObject[];
  /** The source revision the list was taken at; a watch continues from here. */
  resourceVersion: string;
}

export type WatchEvent =
  | { type: 'ADDED' | 'MODIFIED' | 'DELETED'; object: KubeObject }
  /** Progress marker: nothing changed for the watched objects up to this version. */
  | { type: 'BOOKMARK'; resourceVersion: string };

export interface GetOptions {
  /** "0" means any cached copy is acceptable (the kubelet's periodic-refresh read). */
  resourceVersion?: string;
  signal?: AbortSignal;
}

export interface ListOptions {
  /** Restrict to one object (the kubelet lists with fieldSelector metadata.name=<name>). */
  name?: string;
  signal?: AbortSignal;
}

export interface WatchOptions {
  name?: string;
  /** Events after this version. A version the source no longer has throws BERTH_RESOURCE_VERSION_TOO_OLD. */
  resourceVersion: string;
  signal: AbortSignal;
}

/** A source follows the lifecycle contract (common/lifecycle.ts); see sources/source-lifecycle.ts. */
export interface ObjectSource extends Lifecycle {
  /** Throws BerthError BERTH_OBJECT_NOT_FOUND when absent, BERTH_SOURCE_FAILED on other failures. */
  get(resource: ObjectResource, namespace: string, name: string, options?: GetOptions): Promise<KubeObject>;
  list(resource: ObjectResource, namespace: string, options?: ListOptions): Promise<ObjectList>;
  /** Ends when the signal aborts; throws BERTH_RESOURCE_VERSION_TOO_OLD when the caller must re-list. */
  watch(resource: ObjectResource, namespace: string, options: WatchOptions): AsyncIterable<WatchEvent>;
}
