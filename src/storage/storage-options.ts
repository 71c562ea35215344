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
   * Whether start() waits until the writer thread runs (default true). With
   * false, start() returns once the file is open and the thread boots
   * meanwhile (tens of ms, mostly on another core); `writerStarted()` says
   * when it runs, and a caller with other start-up work awaits it last.
   */
  waitForWriter?: boolean;
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
  waitForWriter: true,
  writerIdleStopMs: 30_000,
} as const;

export interface ResolvedSqliteStorageOptions {
  path: string;
  logger: Logger;
  clock: Clock;
  onCorrupt: ((report: StorageCorruptionReport) => void) | undefined;
  busyTimeoutMs: number;
  checkIntervalMs: number | false;
  waitForWriter: boolean;
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
  return {
    path: options.path,
    logger: options.logger ?? silentLogger,
    clock: options.clock ?? systemClock,
    onCorrupt: options.onCorrupt,
    busyTimeoutMs: options.busyTimeoutMs ?? SQLITE_STORAGE_DEFAULTS.busyTimeoutMs,
    checkIntervalMs: options.checkIntervalMs ?? SQLITE_STORAGE_DEFAULTS.checkIntervalMs,
    waitForWriter: options.waitForWriter ?? SQLITE_STORAGE_DEFAULTS.waitForWriter,
    writerIdleStopMs: options.writerIdleStopMs ?? SQLITE_STORAGE_DEFAULTS.writerIdleStopMs,
  };
}
