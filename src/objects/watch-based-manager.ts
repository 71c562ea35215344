/**
 * The Watch strategy in one piece (kubelet NewWatchBasedManager): a watch
 * store plus the pod-reference manager, with maxIdleTime = 5 × resyncInterval.
 */
import type { Clock, Logger } from '../common/index.js';
import { type CacheBasedManager, createCacheBasedManager, type RegisterMode } from './manager.js';
import type { Pod } from './pod.js';
import type { KubeObject, ObjectResource, ObjectSource } from './source.js';
import { createWatchStore, type WatchStore } from './watch-store.js';

/** The kubelet's default --sync-frequency. */
export const DEFAULT_RESYNC_INTERVAL_MS = 60_000;

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
  mode?: RegisterMode;
}

export interface WatchBasedManager extends CacheBasedManager {
  readonly store: WatchStore;
  /** Starts idle-watch recycling. Idempotent. Aborting `signal` stops every watch. */
  start(signal?: AbortSignal): void;
  /** Stops every watch and waits for them to end. Idempotent. */
  stop(): Promise<void>;
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
  });
  const manager = createCacheBasedManager({
    store,
    getReferencedObjects: options.getReferencedObjects,
    ...(options.mode === undefined ? {} : { mode: options.mode }),
  });
  return {
    ...manager,
    store,
    start: (signal) => store.start(signal),
    stop: () => store.close(),
  };
}
