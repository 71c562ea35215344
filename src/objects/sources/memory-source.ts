/**
 * A real in-memory ObjectSource: tests and embedders put and remove objects
 * and every watcher sees the events, with apiserver-like resourceVersions and
 * a bounded history (a watch from a version older than the history fails with
 * BERTH_RESOURCE_VERSION_TOO_OLD).
 */
import type { KubeObject, ObjectResource, ObjectSource } from '../source.js';
import { sourceLifecycle } from './source-lifecycle.js';
import { VersionedStore, type VersionedStoreOptions } from './versioned-store.js';

export interface MemorySourceOptions extends VersionedStoreOptions {}

export interface MemorySource extends ObjectSource {
  /** Creates (ADDED) or replaces (MODIFIED) an object; returns the stored copy (resourceVersion, uid set). */
  put(resource: ObjectResource, object: KubeObject): KubeObject;
  /** Deletes an object (DELETED); false if it did not exist. */
  remove(resource: ObjectResource, namespace: string, name: string): boolean;
  /** Drops the event history: every watch from an older version must re-list. */
  compact(): void;
  /** Sends a BOOKMARK at the current version to every open watch. */
  bookmark(): void;
  /** Ends every open watch stream (as an apiserver closing watches would). */
  disconnectWatchers(): void;
  /** The newest resourceVersion. */
  readonly resourceVersion: string;
  /** Open watch streams. */
  readonly watcherCount: number;
}

export function createMemorySource(options: MemorySourceOptions = {}): MemorySource {
  const store = new VersionedStore(options);
  const lifecycle = sourceLifecycle({ release: () => store.close() });
  return {
    get state() {
      return lifecycle.state;
    },
    start: (signal) => lifecycle.start(signal),
    stop: () => lifecycle.stop(),
    [Symbol.asyncDispose]: () => lifecycle.stop(),
    get: (resource, namespace, name, getOptions) => store.get(resource, namespace, name, getOptions),
    list: (resource, namespace, listOptions) => store.list(resource, namespace, listOptions),
    watch: (resource, namespace, watchOptions) => store.watch(resource, namespace, watchOptions),
    put: (resource, object) => store.put(resource, object),
    remove: (resource, namespace, name) => store.remove(resource, namespace, name),
    compact: () => store.compact(),
    bookmark: () => store.bookmark(),
    disconnectWatchers: () => store.disconnectWatchers(),
    get resourceVersion() {
      return store.resourceVersion;
    },
    get watcherCount() {
      return store.watcherCount;
    },
  };
}
