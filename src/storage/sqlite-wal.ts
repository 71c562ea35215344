import { closeSync, existsSync, openSync, readFileSync, readSync, statSync } from 'node:fs';
import type BetterSqlite3 from 'better-sqlite3';
import { BerthError, errorMessage } from '../common/index.js';
import { CorruptStateError } from './corrupt-state-error.js';
import { openDatabase } from './open-database.js';

/**
 * Bounds on SQLite's write-ahead log. SQLite's own default checkpoints only
 * after 1,000 pages (4 MiB), so on a small data disk the log alone could fill
 * it and never be checkpointed; berth checkpoints after 64 pages (256 KiB)
 * and truncates the log file back to 256 KiB after each checkpoint. (The
 * state database checkpoints itself once its log passes 256 KiB, and empties
 * it: OffLoopCommit.)
 */
export const WAL_AUTOCHECKPOINT_PAGES = 64;
export const WAL_SIZE_LIMIT_BYTES = 256 * 1024;

export function applyWalBounds(db: BetterSqlite3.Database): void {
  db.pragma(`wal_autocheckpoint = ${WAL_AUTOCHECKPOINT_PAGES}`);
  db.pragma(`journal_size_limit = ${WAL_SIZE_LIMIT_BYTES}`);
}

/** Whether a SQLite or file-system error means the disk (or its quota) is full. */
export function isDiskFull(err: unknown): boolean {
  const code = err instanceof Error ? (err as { code?: unknown }).code : undefined;
  if (typeof code !== 'string') return false;
  // SHMSIZE: the shared-memory file next to a WAL database could not be grown.
  return code === 'SQLITE_FULL' || code === 'ENOSPC' || code === 'EDQUOT' || code === 'SQLITE_IOERR_SHMSIZE';
}

/** A BERTH_STORAGE_FAILED that says the disk is full, and that nothing is moved aside or lost. */
export function diskFullError(message: string, cause: unknown, path?: string): BerthError {
  return new BerthError(
    'BERTH_STORAGE_FAILED',
    `${message}: the disk is full (${errorMessage(cause)}); free space on it: berth retries by itself and loses nothing`,
    { cause, details: { ...(path === undefined ? {} : { path }), diskFull: true } },
  );
}

/**
 * True when a small store's SQLite file (device allocations, CSI volume
 * state) does not exist yet, nor a write-ahead log of one: the store then
 * holds nothing and creates its file with its first write. Creating those
 * files at every start cost a fresh daemon about 6 ms of its start (issue 20).
 */
export function storeNotCreated(path: string): boolean {
  return path !== ':memory:' && !existsSync(path) && !existsSync(`${path}-wal`);
}

/**
 * Opens an in-memory, read-only copy of a WAL-mode database file, for a disk
 * too full to open the file itself (SQLite must create the shared-memory
 * file). Throws when a non-empty write-ahead log holds changes the file
 * alone lacks: reading the file without them would show an older state.
 * A missing or empty file gives an empty in-memory database.
 */
export function openReadOnlyCopy(path: string): BetterSqlite3.Database {
  let wal = 0;
  try {
    wal = statSync(`${path}-wal`).size;
  } catch {
    // No log: the file holds everything.
  }
  if (wal > 0) {
    throw new Error(
      `its write-ahead log ${path}-wal holds changes not yet in the file, so it cannot be read from the file alone`,
    );
  }
  let image: Buffer;
  try {
    image = readFileSync(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    image = Buffer.alloc(0);
  }
  if (image.length === 0) return openDatabase(':memory:');
  // Bytes 18-19 say WAL mode; an in-memory copy must say rollback mode to be readable.
  image[18] = 1;
  image[19] = 1;
  return openDatabase(image, { readonly: true });
}

const SQLITE_HEADER = Buffer.from('SQLite format 3\0', 'latin1');

/**
 * Throws CorruptStateError for a non-empty file that does not start like a
 * SQLite database. Checked before SQLite opens a file: SQLite would delete a
 * stray -wal next to a non-database.
 */
export function checkHeader(path: string): void {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch {
    return; // Missing (created next) or unopenable (SQLite reports it properly).
  }
  try {
    const head = Buffer.alloc(SQLITE_HEADER.length);
    const read = readSync(fd, head, 0, head.length, 0);
    if (read > 0 && !head.subarray(0, read).equals(SQLITE_HEADER.subarray(0, read))) {
      throw new CorruptStateError('file is not a database (no SQLite header)');
    }
    if (read > 0 && read < SQLITE_HEADER.length) {
      throw new CorruptStateError('file is not a database (truncated header)');
    }
  } finally {
    closeSync(fd);
  }
}
