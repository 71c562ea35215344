import type { watch } from 'node:fs';
import { resolve } from 'node:path';
import type { DesiredStateOfWorld } from '../cache/types.js';
import {
  BerthError,
  type Clock,
  type Logger,
  silentLogger,
  systemClock,
  TurnBudget,
  WORK_SLICE_MS,
} from '../common/index.js';
import { inspectPath } from './inspect-path.js';
import type { TreeWatch } from './tree-watch.js';

export interface PluginWatcherOptions {
  /** The plugin registration directory (kubelet: /var/lib/kubelet/plugins_registry). Created if missing. */
  dir: string;
  /** An optional second directory whose sockets are flagged `foundInDeprecatedDir`. */
  deprecatedDir?: string;
  /** Where found sockets are added and vanished ones removed. */
  desiredState: DesiredStateOfWorld;
  clock?: Clock;
  logger?: Logger;
  /** Full rescan period; 0 disables the periodic rescan. Default 10 s. */
  rescanIntervalMs?: number;
  /** Watch the tree with fs.watch (see tree-watch.ts). Default true; false leaves discovery to the rescans. */
  useFsWatch?: boolean;
  /**
   * Create a missing directory (the kubelet's behaviour). Default true; false
   * (an observer, which writes nothing) waits for it to appear: each scan finds
   * it missing until the owner creates it.
   */
  createMissing?: boolean;
  /** @internal The event-loop turn shared with the pipeline's other parts (default: one of its own). */
  turn?: TurnBudget;
  /** @internal How a path is looked at (default inspectPath); tests count the calls. */
  inspect?: typeof inspectPath;
  /** @internal fs.watch (the default); tests make it fail as an exhausted inotify does (ENOSPC, EMFILE). */
  watch?: typeof watch;
}

/**
 * While a watch is failing (inotify watches or descriptors exhausted: ENOSPC,
 * EMFILE), a directory goes unwatched and only a rescan sees what changes in
 * it; the rescans then run this often (instead of every rescanIntervalMs) until
 * every watch is back, so such a directory's sockets are found within about
 * half a second, not after up to 10 s. A rescan skips unchanged directories by
 * their mtime, so this costs a stat per directory.
 */
export const WATCH_FAILING_RESCAN_MS = 500;

export const DEFAULT_RESCAN_INTERVAL_MS = 10_000;

/**
 * While fs.watch covers a directory, a periodic rescan reads the directory but
 * stats only the sockets it does not know (a known socket re-created in place
 * reaches the watch as an event); every this-many-th periodic rescan stats
 * every socket again, to repair what the watch may have lost. At 5,000 sockets
 * a stat of each was most of an idle node's CPU.
 */
export const FULL_RESCAN_EVERY = 6;

/**
 * Periodic rescans skip directories whose mtime shows nothing changed since
 * they were last read (listing-cache.ts); every this-many-th periodic rescan
 * reads everything regardless, in case a file system's directory mtimes
 * cannot be trusted (5 minutes at the default interval).
 */
export const THOROUGH_RESCAN_EVERY = 30;

export interface WatchedRoot {
  readonly path: string;
  readonly deprecated: boolean;
  /** Present while running with useFsWatch. */
  tree: TreeWatch | undefined;
  /** Set after a watch failure was logged at warn, so a lasting failure does not warn on every rescan. */
  watchFailing: boolean;
  /** A watch failed during the scan in progress (a clean scan ends `watchFailing`). */
  failedThisScan: boolean;
}

export interface ResolvedOptions {
  roots: WatchedRoot[];
  desiredState: DesiredStateOfWorld;
  clock: Clock;
  logger: Logger;
  rescanIntervalMs: number;
  useFsWatch: boolean;
  createMissing: boolean;
  inspect: typeof inspectPath;
  watch: typeof watch | undefined;
  turn: TurnBudget;
}

export function resolveOptions(options: PluginWatcherOptions): ResolvedOptions {
  const invalid = (message: string) => new BerthError('BERTH_INVALID_ARGUMENT', `plugin watcher: ${message}`);
  if (typeof options.dir !== 'string' || options.dir === '') throw invalid('dir must be a non-empty path');
  if (
    options.deprecatedDir !== undefined &&
    (typeof options.deprecatedDir !== 'string' || options.deprecatedDir === '')
  ) {
    throw invalid('deprecatedDir must be a non-empty path when given');
  }
  if (typeof options.desiredState?.addOrUpdatePlugin !== 'function')
    throw invalid('desiredState is required');
  const rescanIntervalMs = options.rescanIntervalMs ?? DEFAULT_RESCAN_INTERVAL_MS;
  if (!Number.isFinite(rescanIntervalMs) || rescanIntervalMs < 0) {
    throw invalid(`rescanIntervalMs must be a number >= 0 (0 disables), got ${rescanIntervalMs}`);
  }
  const newRoot = (path: string, deprecated: boolean): WatchedRoot => ({
    path: resolve(path),
    deprecated,
    tree: undefined,
    watchFailing: false,
    failedThisScan: false,
  });
  const roots = [newRoot(options.dir, false)];
  if (options.deprecatedDir !== undefined) {
    const deprecated = newRoot(options.deprecatedDir, true);
    if (deprecated.path === roots[0]?.path) throw invalid('deprecatedDir must differ from dir');
    roots.push(deprecated);
  }
  return {
    roots,
    desiredState: options.desiredState,
    clock: options.clock ?? systemClock,
    logger: (options.logger ?? silentLogger).child({ component: 'plugin-watcher' }),
    rescanIntervalMs,
    useFsWatch: options.useFsWatch ?? true,
    createMissing: options.createMissing ?? true,
    inspect: options.inspect ?? inspectPath,
    watch: options.watch,
    turn: options.turn ?? new TurnBudget(WORK_SLICE_MS),
  };
}
