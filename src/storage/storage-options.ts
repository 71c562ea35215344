import { BerthError, type Clock, type Logger, silentLogger, systemClock } from '../common/index.js';
import type { StorageCorruptionReport } from './types.js';

export interface SqliteStorageOptions {
  /** The database file, e.g. `<data-dir>/state.db`. Its directory is created if missing. */
  path: string;
  logger?: Logger;
  /** Used for the timestamp of a set-aside file. */
  clock?: Clock;
  /** Told when a corrupt or unreadable database was moved aside (also logged). */
  onCorrupt?: (report: StorageCorruptionReport) => void;
  /** How long a statement waits for another connection's lock (ms). Default 5000. */
  busyTimeoutMs?: number;
  /** How often the file is checked for having been deleted (ms), or false for never. Default 2000. */
  checkIntervalMs?: number | false;
  /**
   * When the writer thread starts. `'start'` (the default): start() starts it
   * and waits until it runs, so a broken install fails the start.
   * `'first-write'`: start() only checks that the thread's module is
   * installed; the first batch is written on the main connection (one
   * transaction) while the thread starts for the batches after it, as after
   * an idle stop. A daemon that is started and asked nothing spends no
   * main-thread time on a thread (about 7 ms of a 156 ms start, issue 20).
   */
  writerStart?: 'start' | 'first-write';
  /**
   * How long the writer thread may have nothing to write before it ends (ms),
   * or false to keep it. The next write starts it again (tens of ms, waited
   * for by that write). Default 30000.
   */
  writerIdleStopMs?: number | false;
}

/** The defaults of the SQLite storage, in one place. */
export const SQLITE_STORAGE_DEFAULTS = {
  busyTimeoutMs: 5000,
  checkIntervalMs: 2000,
  writerStart: 'start',
  writerIdleStopMs: 30_000,
} as const;

export interface ResolvedSqliteStorageOptions {
  path: string;
  logger: Logger;
  clock: Clock;
  onCorrupt: ((report: StorageCorruptionReport) => void) | undefined;
  busyTimeoutMs: number;
  checkIntervalMs: number | false;
  writerStart: 'start' | 'first-write';
  writerIdleStopMs: number | false;
}

export function resolveSqliteStorageOptions(options: SqliteStorageOptions): ResolvedSqliteStorageOptions {
  const idle = options.writerIdleStopMs;
  if (idle !== undefined && idle !== false && !(Number.isFinite(idle) && idle > 0)) {
    throw new BerthError(
      'BERTH_INVALID_ARGUMENT',
      `sqlite storage: writerIdleStopMs must be a positive number of milliseconds or false, got ${String(idle)}`,
    );
  }
  const writerStart = options.writerStart ?? SQLITE_STORAGE_DEFAULTS.writerStart;
  if (writerStart !== 'start' && writerStart !== 'first-write') {
    throw new BerthError(
      'BERTH_INVALID_ARGUMENT',
      `sqlite storage: writerStart must be 'start' or 'first-write', got ${JSON.stringify(writerStart)}`,
    );
  }
  return {
    path: options.path,
    logger: options.logger ?? silentLogger,
    clock: options.clock ?? systemClock,
    onCorrupt: options.onCorrupt,
    busyTimeoutMs: options.busyTimeoutMs ?? SQLITE_STORAGE_DEFAULTS.busyTimeoutMs,
    checkIntervalMs: options.checkIntervalMs ?? SQLITE_STORAGE_DEFAULTS.checkIntervalMs,
    writerStart,
    writerIdleStopMs: options.writerIdleStopMs ?? SQLITE_STORAGE_DEFAULTS.writerIdleStopMs,
  };
}
