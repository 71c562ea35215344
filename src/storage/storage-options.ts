import { type Clock, type Logger, silentLogger, systemClock } from '../common/index.js';
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
}

/** The defaults of the SQLite storage, in one place. */
export const SQLITE_STORAGE_DEFAULTS = {
  busyTimeoutMs: 5000,
  checkIntervalMs: 2000,
} as const;

export interface ResolvedSqliteStorageOptions {
  path: string;
  logger: Logger;
  clock: Clock;
  onCorrupt: ((report: StorageCorruptionReport) => void) | undefined;
  busyTimeoutMs: number;
  checkIntervalMs: number | false;
}

export function resolveSqliteStorageOptions(options: SqliteStorageOptions): ResolvedSqliteStorageOptions {
  return {
    path: options.path,
    logger: options.logger ?? silentLogger,
    clock: options.clock ?? systemClock,
    onCorrupt: options.onCorrupt,
    busyTimeoutMs: options.busyTimeoutMs ?? SQLITE_STORAGE_DEFAULTS.busyTimeoutMs,
    checkIntervalMs: options.checkIntervalMs ?? SQLITE_STORAGE_DEFAULTS.checkIntervalMs,
  };
}
