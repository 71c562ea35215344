/**
 * The Watch strategy in one piece (kubelet NewWatchBasedManager): a watch
 * store plus the pod-reference manager, with maxIdleTime = 5 × resyncInterval.
 */
import type { BackoffSetting, Clock, Lifecycle, Logger } from '../common/index.js';
import { type CacheBasedManager, createCacheBasedManager, type RegisterMode } from './manager.js';
import { DEFAULT_RESYNC_INTERVAL_MS } from './objects-options.js';
import type { Pod } from './pod.js';
import type { KubeObject, ObjectResource, ObjectSource } from './source.js';
import { createWatchStore, type WatchStore } from './watch-store.js';

export interface WatchBasedManagerOptions {
  source: ObjectSource;
  resource: ObjectResource;
  groupResource?: string;
  getReferencedObjects: (pod: Pod) => Set<string>;
  clock: Clock;
  logger?: Logger;
  /** Default 1 min; idle watches stop after 5 × this (at least 1 min). */
  resyncIntervalMs?: number;
  isImmutable?: (object: KubeObject) => boolean;
  syncTimeoutMs?: number;
  immutableRecheckMs?: number;
  /** Delay between a reflector's failed list/watch cycles. Default DEFAULT_REFLECTOR_BACKOFF. */
  reflectorBackoff?: BackoffSetting;
  mode?: RegisterMode;
}

/** The manager's lifecycle is its store's: start() adds idle recycling, stop() ends every watch. */
export interface WatchBasedManager extends CacheBasedManager, Lifecycle {
  readonly store: WatchStore;
}

export function createWatchBasedManager(options: WatchBasedManagerOptions): WatchBasedManager {
  const resyncIntervalMs = options.resyncIntervalMs ?? DEFAULT_RESYNC_INTERVAL_MS;
  const store = createWatchStore({
    source: options.source,
    resource: options.resource,
    clock: options.clock,
    maxIdleTimeMs: 5 * resyncIntervalMs,
    ...(options.groupResource === undefined ? {} : { groupResource: options.groupResource }),
    ...(options.logger === undefined ? {} : { logger: options.logger }),
    ...(options.isImmutable === undefined ? {} : { isImmutable: options.isImmutable }),
    ...(options.syncTimeoutMs === undefined ? {} : { syncTimeoutMs: options.syncTimeoutMs }),
    ...(options.immutableRecheckMs === undefined ? {} : { immutableRecheckMs: options.immutableRecheckMs }),
    ...(options.reflectorBackoff === undefined ? {} : { reflectorBackoff: options.reflectorBackoff }),
  });
  const manager = createCacheBasedManager({
    store,
    getReferencedObjects: options.getReferencedObjects,
    ...(options.mode === undefined ? {} : { mode: options.mode }),
  });
  return {
    ...manager,
    store,
    get state() {
      return store.state;
    },
    start: (signal) => store.start(signal),
    stop: () => store.stop(),
    [Symbol.asyncDispose]: () => store.stop(),
  };
}
