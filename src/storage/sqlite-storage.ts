import { existsSync, mkdirSync, renameSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import type Database from 'better-sqlite3';
import {
  BerthError,
  type ClockTimer,
  errorMessage,
  isBerthError,
  LifecycleComponent,
} from '../common/index.js';
import { CorruptStateError } from './corrupt-state-error.js';
import { OffLoopCommit } from './off-loop-commit.js';
import { openDatabase } from './open-database.js';
import { migrate, readSchemaVersion, SCHEMA_VERSION } from './sqlite-migrations.js';
import { readState, replaceState } from './sqlite-rows.js';
import { applyWalBounds, checkHeader, diskFullError, isDiskFull, openReadOnlyCopy } from './sqlite-wal.js';
import {
  type ResolvedSqliteStorageOptions,
  resolveSqliteStorageOptions,
  type SqliteStorageOptions,
} from './storage-options.js';
import type {
  RegistryChange,
  RegistryState,
  RegistryStorage,
  StorageCorruptionReport,
  StorageRecreatedListener,
  StorageWriteStats,
} from './types.js';

type Db = Database.Database;

export interface SqliteStorage extends RegistryStorage {
  readonly path: string;
  /** The schema version of the open database (after migrations); 0 before start. */
  readonly schemaVersion: number;
  /** The last corruption set aside by this storage, for status displays. */
  readonly corruption?: StorageCorruptionReport | undefined;
  onRecreated(listener: StorageRecreatedListener): () => void;
  /** Re-creates a database file deleted while open; true when it did (also run on a timer). */
  checkFile(): boolean;
}

/**
 * The SQLite state database. Nothing is opened until start(), which creates or
 * migrates the file and checks it. start() rejects
 * with BERTH_STORAGE_VERSION, without touching the file, when it was written
 * by a newer berth, and with BERTH_STORAGE_FAILED when it cannot be opened at
 * all. A corrupt file is moved aside and replaced by an empty database; the
 * first getDynamicPluginRegistryState() then throws BERTH_STORAGE_CORRUPT once.
 *
 * A disk too full to open the database in WAL mode (SQLite must create its
 * shared-memory file) does not stop the start: the file is read into memory
 * and the storage runs read-only (`readOnly` says why). Each write first tries
 * to open the file again, and the first that can is written to it. Nothing is
 * moved aside. A write that fails for any reason (a full disk, a file made
 * read-only) has the next one open the file again too, so a file that became
 * writable is picked up without a restart.
 *
 * The file is checked every `checkIntervalMs` and before each write: a
 * database deleted while berth runs is created afresh, and the
 * `onRecreated` listeners (the registry) write their state back into it.
 *
 * Everything runs on one connection on the calling thread. Incremental writes
 * (applyChanges) are one transaction each, made durable by fsyncs on libuv's
 * thread pool (OffLoopCommit), so a write never blocks the event loop on the
 * disk. Whole-state imports are synchronous and sync on the calling thread.
 */
export function createSqliteStorage(options: SqliteStorageOptions): SqliteStorage {
  return new SqliteStateStorage(resolveSqliteStorageOptions(options));
}

class SqliteStateStorage extends LifecycleComponent implements SqliteStorage {
  readonly path: string;
  readonly #options: ResolvedSqliteStorageOptions;
  readonly #commit: OffLoopCommit;
  readonly #stats: StorageWriteStats = {
    transactions: 0,
    changes: 0,
    rowsWritten: 0,
    failures: 0,
  };
  #db: Db | undefined;
  #schemaVersion = 0;
  #corruption: StorageCorruptionReport | undefined;
  /** Corruption found while opening, handed to the first reader of the state. */
  #unreported: BerthError | undefined;
  /** Why the storage runs read-only from an in-memory copy (a full disk at start). */
  #readOnly: BerthError | undefined;
  /** The last write failed: the next opens the file again first (#reopen). */
  #reopenWanted = false;
  /** The open file's identity, to notice it being deleted or replaced. */
  #identity: { dev: number; ino: number } | undefined;
  #checkTimer: ClockTimer | undefined;
  readonly #recreatedListeners = new Set<StorageRecreatedListener>();

  constructor(options: ResolvedSqliteStorageOptions) {
    super();
    this.#options = options;
    this.path = options.path;
    this.#commit = new OffLoopCommit(options.path);
  }

  protected override async onStart(): Promise<void> {
    this.#db = this.#open();
    this.#scheduleCheck();
  }

  protected override async onStop(): Promise<void> {
    if (this.#checkTimer !== undefined) this.#options.clock.clearTimeout(this.#checkTimer);
    this.#checkTimer = undefined;
    const db = this.#db;
    // Writes already asked for finish first.
    if (db !== undefined) await this.#commit.close(db);
    this.#db = undefined;
  }

  get schemaVersion(): number {
    return this.#schemaVersion;
  }

  get corruption(): StorageCorruptionReport | undefined {
    return this.#corruption;
  }

  get writeStats(): StorageWriteStats {
    return { ...this.#stats };
  }

  get readOnly(): BerthError | undefined {
    return this.#readOnly;
  }

  onRecreated(listener: StorageRecreatedListener): () => void {
    this.#recreatedListeners.add(listener);
    return () => this.#recreatedListeners.delete(listener);
  }

  /**
   * Re-creates the database when its file was deleted since it was opened;
   * true when it did. Also run every `checkIntervalMs`.
   */
  checkFile(): boolean {
    const db = this.#db;
    const identity = this.#identity;
    if (db === undefined || identity === undefined || this.#readOnly !== undefined) return false;
    // Only a deletion is repaired: a file put in its place (a restored backup?) is the operator's doing.
    if (fileIdentity(this.path) !== undefined) return false;
    const { logger, clock } = this.#options;
    db.close();
    this.#commit.forget(db);
    this.#db = undefined;
    let error = new BerthError(
      'BERTH_STORAGE_FAILED',
      `state database ${this.path} was deleted while berth ran; it was created afresh and the registry's state written back`,
      { details: { path: this.path } },
    );
    try {
      this.#db = this.#remember(this.#openFresh());
    } catch (err) {
      error = failure(`state database ${this.path} was deleted and could not be created again`, err);
    }
    logger.warn({ code: error.code, path: this.path, at: clock.now() }, error.message);
    for (const listener of [...this.#recreatedListeners]) {
      try {
        listener(error);
      } catch (err) {
        logger.error({ err: errorMessage(err) }, 'onRecreated listener failed');
      }
    }
    return true;
  }

  getDynamicPluginRegistryState(): RegistryState | undefined {
    const db = this.#requireOpen();
    const unreported = this.#unreported;
    if (unreported !== undefined) {
      this.#unreported = undefined;
      throw unreported;
    }
    try {
      return readState(db);
    } catch (err) {
      if (!isCorruption(err))
        throw failure(`failed to read dynamic plugin registry state from ${this.path}`, err);
      db.close();
      this.#commit.forget(db);
      this.#db = undefined;
      const error = this.#setAside(err);
      this.#db = this.#openFresh();
      throw error;
    }
  }

  putDynamicPluginRegistryState(state: RegistryState): void {
    const db = this.#requireOpen();
    if (this.#readOnly !== undefined) throw this.#readOnly;
    try {
      this.#commit.writeHere(db, () => db.transaction(() => replaceState(db, state))());
    } catch (err) {
      throw failure(`failed to write dynamic plugin registry state to ${this.path}`, err);
    }
  }

  async applyChanges(changes: readonly RegistryChange[]): Promise<void> {
    this.#requireOpen();
    // A deleted file is noticed before a write would go to it (and be lost with it).
    this.checkFile();
    try {
      if (this.#readOnly !== undefined) {
        if (!this.#reopen()) throw this.#readOnly;
      } else if (this.#reopenWanted) {
        this.#reopen();
      }
      const rows = await this.#commit.write(this.#requireOpen(), changes);
      this.#stats.transactions += 1;
      this.#stats.changes += changes.length;
      this.#stats.rowsWritten += rows;
    } catch (err) {
      this.#stats.failures += 1;
      this.#reopenWanted = true;
      throw failure(`failed to write dynamic plugin registry changes to ${this.path}`, err);
    }
  }

  /**
   * Opens the file again for the next write, after a failed one or while
   * read-only since a full disk at start: a file that was read-only when
   * opened stays so for its connection, and a full disk may have kept SQLite
   * from creating its shared-memory file. True when it could (and the old
   * connection, or the in-memory copy, is closed); false, quietly, when not
   * yet: the write then fails and says why.
   */
  #reopen(): boolean {
    let db: Db | undefined;
    try {
      db = openDatabase(this.path, { timeout: this.#options.busyTimeoutMs, fileMustExist: true });
      this.#prepare(db, readSchemaVersion(db));
    } catch {
      db?.close();
      return false;
    }
    // Closed after the new one opened, so it is not the last connection: no checkpoint on closing.
    const old = this.#db;
    this.#db = db;
    this.#identity = fileIdentity(this.path);
    this.#reopenWanted = false;
    if (old !== undefined) {
      old.close();
      this.#commit.forget(old);
    }
    if (this.#readOnly !== undefined) {
      this.#readOnly = undefined;
      this.#options.logger.info({ path: this.path }, 'state database is writable again');
    }
    return true;
  }

  #scheduleCheck(): void {
    const { clock, checkIntervalMs } = this.#options;
    if (checkIntervalMs === false) return;
    this.#checkTimer = clock.setTimeout(() => {
      this.#checkTimer = undefined;
      if (this.state !== 'running') return;
      try {
        this.checkFile();
      } catch (err) {
        this.#options.logger.error({ err: errorMessage(err) }, 'state database check failed');
      }
      this.#scheduleCheck();
    }, checkIntervalMs);
    (this.#checkTimer as { unref?: () => void }).unref?.();
  }

  #requireOpen(): Db {
    if (this.#db === undefined) {
      throw new BerthError(
        'BERTH_STORAGE_FAILED',
        this.state === 'new'
          ? `state database ${this.path} is not open: start the storage first`
          : 'state storage is closed',
      );
    }
    return this.#db;
  }

  #open(): Db {
    try {
      mkdirSync(dirname(this.path), { recursive: true });
    } catch (err) {
      throw failure(`cannot create the directory for state database ${this.path}`, err);
    }
    try {
      return this.#remember(this.#openExisting());
    } catch (err) {
      if (isBerthError(err)) throw err;
      if (isDiskFull(err)) return this.#openReadOnlyCopy(err);
      if (!isCorruption(err)) throw failure(`cannot open state database ${this.path}`, err);
      this.#unreported = this.#setAside(err);
      return this.#remember(this.#openFresh());
    }
  }

  #remember(db: Db): Db {
    this.#identity = fileIdentity(this.path);
    return db;
  }

  /**
   * The disk is too full to open the database in WAL mode. Its file (complete
   * after a clean stop: SQLite checkpoints and removes the log on close) is
   * read into memory, so berth starts and lists what it has, read-only.
   */
  #openReadOnlyCopy(cause: unknown): Db {
    const { path } = this;
    const full = diskFullError(`cannot open state database ${path}`, cause, path);
    let db: Db | undefined;
    try {
      db = openReadOnlyCopy(path);
      // A file never written (new data directory) gives an empty, writable copy: give it the schema.
      if (!db.readonly && readSchemaVersion(db) === 0) migrate(db, 0);
      const version = readSchemaVersion(db);
      if (version !== SCHEMA_VERSION)
        throw new Error(`schema version ${version}, expected ${SCHEMA_VERSION}`);
      this.#schemaVersion = version;
      readState(db);
    } catch (err) {
      db?.close();
      throw new BerthError(
        'BERTH_STORAGE_FAILED',
        `${full.message}; a read-only copy could not be read either (${errorMessage(err)}): free some space and start again (do not move the database aside)`,
        { cause, details: { path, diskFull: true } },
      );
    }
    this.#readOnly = full;
    this.#options.logger.error(
      { code: full.code, path },
      `${full.message}; started read-only from its last state`,
    );
    return db;
  }

  #openExisting(): Db {
    // Checked before SQLite opens the file: SQLite would delete a stray -wal next to a non-database.
    checkHeader(this.path);
    const db = openDatabase(this.path, { timeout: this.#options.busyTimeoutMs });
    try {
      // Reads only, before anything is written: a newer database stays untouched.
      const check = db.pragma('quick_check', { simple: true });
      if (check !== 'ok') throw new CorruptStateError(`integrity check failed: ${String(check)}`);
      const version = readSchemaVersion(db);
      if (version > SCHEMA_VERSION) {
        throw new BerthError(
          'BERTH_STORAGE_VERSION',
          `state database ${this.path} has schema version ${version}, newer than version ${SCHEMA_VERSION} ` +
            'that this berth understands; run a newer berth or use another data directory',
          { details: { path: this.path, version, supported: SCHEMA_VERSION } },
        );
      }
      this.#prepare(db, version);
      // Decode everything now, so damage is found (and set aside) at start-up, not at some later read.
      readState(db);
      return db;
    } catch (err) {
      db.close();
      throw err;
    }
  }

  #openFresh(): Db {
    let db: Db | undefined;
    try {
      db = openDatabase(this.path, { timeout: this.#options.busyTimeoutMs });
      this.#prepare(db, 0);
      return db;
    } catch (err) {
      db?.close();
      throw failure(`cannot create a fresh state database at ${this.path}`, err);
    }
  }

  #prepare(db: Db, version: number): void {
    db.pragma('journal_mode = WAL');
    // FULL: a put that returned survives power loss or kill -9, not only a clean exit.
    db.pragma('synchronous = FULL');
    applyWalBounds(db);
    this.#schemaVersion = migrate(db, version);
  }

  /** Moves the unreadable database (with its WAL and shared-memory files) aside and reports it. */
  #setAside(cause: unknown): BerthError {
    const { path, clock, logger, onCorrupt } = this.#options;
    const at = clock.now();
    const movedTo = asidePath(path, at);
    try {
      for (const suffix of ['', '-wal', '-shm']) {
        if (existsSync(path + suffix)) renameSync(path + suffix, movedTo + suffix);
      }
    } catch (err) {
      // Refuse to continue rather than overwrite state we could not preserve.
      throw failure(`state database ${path} is unreadable and could not be moved aside`, err);
    }
    const error = new BerthError(
      'BERTH_STORAGE_CORRUPT',
      `state database ${path} could not be read (${errorMessage(cause)}); ` +
        `it was moved to ${movedTo} and berth started with empty state`,
      { cause, details: { path, movedTo } },
    );
    const report: StorageCorruptionReport = { path, movedTo, error, at };
    this.#corruption = report;
    logger.error({ code: error.code, path, movedTo, cause: errorMessage(cause) }, error.message);
    try {
      onCorrupt?.(report);
    } catch (err) {
      logger.error({ err: errorMessage(err) }, 'onCorrupt callback failed');
    }
    return error;
  }
}

function isCorruption(err: unknown): boolean {
  if (err instanceof CorruptStateError) return true;
  const code = err instanceof Error ? (err as { code?: unknown }).code : undefined;
  return typeof code === 'string' && (code === 'SQLITE_NOTADB' || code.startsWith('SQLITE_CORRUPT'));
}

function fileIdentity(path: string): { dev: number; ino: number } | undefined {
  try {
    const { dev, ino } = statSync(path);
    return { dev, ino };
  } catch {
    return undefined;
  }
}

function failure(message: string, cause: unknown): BerthError {
  if (isBerthError(cause)) return cause;
  if (isDiskFull(cause)) return diskFullError(message, cause);
  return new BerthError('BERTH_STORAGE_FAILED', `${message}: ${errorMessage(cause)}`, { cause });
}

function asidePath(path: string, at: number): string {
  const stamp = new Date(at).toISOString().replace(/[:.]/g, '-');
  let candidate = `${path}.corrupt-${stamp}`;
  for (let n = 1; existsSync(candidate); n++) candidate = `${path}.corrupt-${stamp}-${n}`;
  return candidate;
}
