import { chmodSync, closeSync, mkdirSync, openSync } from 'node:fs';
import { dirname } from 'node:path';
import type BetterSqlite3 from 'better-sqlite3';
import { BerthError, errorMessage } from '../common/index.js';
import { openDatabase } from './open-database.js';
import {
  applyWalBounds,
  checkHeader,
  diskFullError,
  isDiskFull,
  openReadOnlyCopy,
  storeNotCreated,
} from './sqlite-wal.js';

export interface SmallSqliteFileOptions {
  /** The file, or ':memory:'. */
  path: string;
  /** What the file holds, for messages: "device allocations". */
  what: string;
  /** Why the file is kept whatever fails, for messages: "it holds allocations in use". */
  keep: string;
  /** The schema version this berth writes; a file with a newer one is refused (BERTH_STORAGE_VERSION). */
  schemaVersion: number;
  /** Creates the tables of `schemaVersion` (CREATE TABLE IF NOT EXISTS): on a file below that version, and on an empty in-memory copy. */
  createSchema(db: BetterSqlite3.Database): void;
}

/**
 * One small SQLite file of records that running workloads depend on (device
 * allocations, CSI volume state): WAL, synchronous=FULL (a write that
 * returned survives a power cut), owner-only whatever the umask.
 *
 * - A file that does not exist yet is created by the first write, so a node
 *   that never used the feature has no file (and a start opens nothing).
 * - On a disk too full to open the file (SQLite must create its shared-memory
 *   file), what it holds is read from an in-memory copy and writes are
 *   refused with BERTH_STORAGE_FAILED naming the full disk; each write tries
 *   the file again, so the store recovers by itself once there is space.
 * - The file is never moved aside: what it records is in use.
 */
export class SmallSqliteFile {
  readonly path: string;
  readonly #options: SmallSqliteFileOptions;
  /** Undefined until the file exists. */
  #db: BetterSqlite3.Database | undefined;
  /** Set while only an in-memory copy could be opened (a full disk): why writes fail. */
  #readOnly: BerthError | undefined;
  #closed = false;

  constructor(options: SmallSqliteFileOptions) {
    this.path = options.path;
    this.#options = options;
    if (storeNotCreated(this.path)) return;
    const { what, keep } = options;
    try {
      this.#db = openWritable(options);
    } catch (err) {
      if (err instanceof BerthError) throw err;
      if (!isDiskFull(err)) {
        throw new BerthError(
          'BERTH_STORAGE_FAILED',
          `cannot open ${what} ${this.path}: ${errorMessage(err)}; keep the file (${keep}) and fix what the error names`,
          { cause: err },
        );
      }
      this.#readOnly = diskFullError(`cannot open ${what} ${this.path}`, err, this.path);
      try {
        const copy = openReadOnlyCopy(this.path);
        if (!copy.readonly) options.createSchema(copy);
        this.#db = copy;
      } catch (copyErr) {
        throw new BerthError(
          'BERTH_STORAGE_FAILED',
          `${this.#readOnly.message}; a read-only copy could not be read either (${errorMessage(copyErr)}): free some space and start again (keep the file: ${keep})`,
          { cause: err },
        );
      }
    }
  }

  /** Why writes are refused, while the store reads from an in-memory copy. */
  get readOnly(): BerthError | undefined {
    return this.#readOnly;
  }

  /** The connection to read from; undefined while the file was never created (it then holds nothing). */
  get db(): BetterSqlite3.Database | undefined {
    return this.#db;
  }

  /**
   * Runs one write on the file: creates it first when it does not exist, and
   * leaves the in-memory copy for the file when the file opens again. A full
   * disk throws BERTH_STORAGE_FAILED naming it (details.diskFull).
   */
  write<T>(run: (db: BetterSqlite3.Database) => T): T {
    const failed = `writing ${this.#options.what} ${this.path} failed`;
    if (this.#readOnly !== undefined) this.#leaveReadOnly(failed, this.#readOnly);
    const db = this.#db ?? this.#create();
    try {
      return run(db);
    } catch (err) {
      throw isDiskFull(err)
        ? diskFullError(failed, err, this.path)
        : BerthError.from(err, 'BERTH_STORAGE_FAILED', failed);
    }
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#db?.close();
  }

  /** Swaps the in-memory copy for the file once it opens; throws the full-disk error while it does not. */
  #leaveReadOnly(failed: string, reason: BerthError): void {
    let db: BetterSqlite3.Database;
    try {
      db = openWritable(this.#options);
    } catch (err) {
      throw isDiskFull(err) ? diskFullError(failed, err, this.path) : reason;
    }
    this.#db?.close();
    this.#db = db;
    this.#readOnly = undefined;
  }

  /** The first write of a store that had no file: creates it (owner-only, WAL, the schema). */
  #create(): BetterSqlite3.Database {
    const { what } = this.#options;
    try {
      this.#db = openWritable(this.#options);
    } catch (err) {
      if (isDiskFull(err)) throw diskFullError(`creating ${what} ${this.path} failed`, err, this.path);
      throw BerthError.from(err, 'BERTH_STORAGE_FAILED', `cannot create ${what} ${this.path}`);
    }
    return this.#db;
  }
}

function openWritable(options: SmallSqliteFileOptions): BetterSqlite3.Database {
  const { path, what, schemaVersion } = options;
  if (path !== ':memory:') {
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    // Owner-only whatever the umask, as state.db: SQLite gives its -wal and -shm files the same mode.
    closeSync(openSync(path, 'a', 0o600));
    chmodSync(path, 0o600);
    checkHeader(path);
  }
  const db = openDatabase(path);
  try {
    // Before anything is set: a newer berth's file is left byte for byte as it was.
    const version = db.pragma('user_version', { simple: true }) as number;
    if (version > schemaVersion) {
      throw new BerthError(
        'BERTH_STORAGE_VERSION',
        `${what} ${path}: the file has schema version ${version}; this berth reads up to ${schemaVersion}`,
        { details: { path } },
      );
    }
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = FULL');
    applyWalBounds(db);
    if (version < schemaVersion) {
      options.createSchema(db);
      db.pragma(`user_version = ${schemaVersion}`);
    }
    return db;
  } catch (err) {
    db.close();
    throw err;
  }
}
