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
import { openDatabase } from './open-database.js';
import { migrate, readSchemaVersion, SCHEMA_VERSION } from './sqlite-migrations.js';
import { createChangeWriter, readState, replaceState } from './sqlite-rows.js';
import {
  applyWalBounds,
  checkHeader,
  diskFullError,
  isDiskFull,
  openReadOnlyCopy,
  syncWriteAheadLog,
  WAL_AUTOCHECKPOINT_PAGES,
} from './sqlite-wal.js';
import { SqliteWriter } from './sqlite-writer.js';
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
  /** A writer thread runs now (it ends after `writerIdleStopMs` with nothing to write, and the next write starts one). */
  readonly writerRunning: boolean;
}

/**
 * The SQLite state database. Nothing is opened until start(), which creates or
 * migrates the file, checks it, and starts the writer thread (with
 * `writerStart: 'first-write'`, the first write starts it). start() rejects
 * with BERTH_STORAGE_VERSION, without touching the file, when it was written
 * by a newer berth, and with BERTH_STORAGE_FAILED when it cannot be opened at
 * all. A corrupt file is moved aside and replaced by an empty database; the
 * first getDynamicPluginRegistryState() then throws BERTH_STORAGE_CORRUPT once.
 *
 * A disk too full to open the database in WAL mode (SQLite must create its
 * shared-memory file) does not stop the start: the file is read into memory
 * and the storage runs read-only (`readOnly` says why) until a write through
 * the writer thread lands, which reopens it normally. Nothing is moved aside.
 *
 * The file is checked every `checkIntervalMs` and before each write: a
 * database deleted while berth runs is created afresh, and the
 * `onRecreated` listeners (the registry) write their state back into it.
 *
 * Reads and whole-state imports use a connection on the calling thread;
 * incremental writes (applyChanges) run on the writer thread, one transaction
 * and one fsync per call, except the first after the thread ended for being
 * idle, which is written on the calling thread while a new one starts.
 */
export function createSqliteStorage(options: SqliteStorageOptions): SqliteStorage {
  return new SqliteStateStorage(resolveSqliteStorageOptions(options));
}

class SqliteStateStorage extends LifecycleComponent implements SqliteStorage {
  readonly path: string;
  readonly #options: ResolvedSqliteStorageOptions;
  readonly #writer: SqliteWriter;
  readonly #stats: StorageWriteStats = {
    transactions: 0,
    changes: 0,
    rowsWritten: 0,
    failures: 0,
    inlineTransactions: 0,
  };
  #db: Db | undefined;
  #schemaVersion = 0;
  #corruption: StorageCorruptionReport | undefined;
  /** Corruption found while opening, handed to the first reader of the state. */
  #unreported: BerthError | undefined;
  /** Why the storage runs read-only from an in-memory copy (a full disk at start). */
  #readOnly: BerthError | undefined;
  /** The open file's identity, to notice it being deleted or replaced. */
  #identity: { dev: number; ino: number } | undefined;
  #checkTimer: ClockTimer | undefined;
  /** The main connection's own batch writer (one transaction), for a batch that finds no writer thread. */
  #writeHere: { db: Db; write: (changes: readonly RegistryChange[]) => number } | undefined;
  readonly #recreatedListeners = new Set<StorageRecreatedListener>();

  constructor(options: ResolvedSqliteStorageOptions) {
    super();
    this.#options = options;
    this.path = options.path;
    this.#writer = new SqliteWriter(
      { path: options.path, busyTimeoutMs: options.busyTimeoutMs },
      options.writerIdleStopMs,
    );
  }

  protected override async onStart(): Promise<void> {
    if (this.#options.writerStart === 'first-write') {
      // The first batch starts the thread (#applyHere); a missing module still fails the start.
      this.#writer.checkInstalled();
      this.#db = this.#open();
      this.#scheduleCheck();
      return;
    }
    // The thread boots (tens of ms, mostly on another core) while this one opens the file.
    // Its first message is a no-op 'close', so it never touches the file before the open below.
    const writerRunning = this.#writer.start();
    try {
      this.#db = this.#open();
    } catch (err) {
      await writerRunning.catch(() => undefined);
      await this.#writer.stop();
      throw err;
    }
    await writerRunning;
    this.#scheduleCheck();
  }

  get writerRunning(): boolean {
    return this.#writer.threadRunning;
  }

  protected override async onStop(): Promise<void> {
    if (this.#checkTimer !== undefined) this.#options.clock.clearTimeout(this.#checkTimer);
    this.#checkTimer = undefined;
    // The writer finishes what was posted before it closes.
    await this.#writer.stop();
    const db = this.#db;
    this.#db = undefined;
    db?.close();
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
    this.#writer.reconnect();
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
      this.#db = undefined;
      const error = this.#setAside(err);
      this.#db = this.#openFresh();
      // The writer still holds the file that was moved aside.
      this.#writer.reconnect();
      throw error;
    }
  }

  putDynamicPluginRegistryState(state: RegistryState): void {
    const db = this.#requireOpen();
    if (this.#readOnly !== undefined) throw this.#readOnly;
    try {
      db.transaction(() => replaceState(db, state))();
    } catch (err) {
      throw failure(`failed to write dynamic plugin registry state to ${this.path}`, err);
    }
  }

  async applyChanges(changes: readonly RegistryChange[]): Promise<void> {
    const db = this.#requireOpen();
    // A deleted file is noticed before a write would go to it (and be lost with it).
    this.checkFile();
    try {
      const rows =
        this.#writer.threadRunning || this.#readOnly !== undefined
          ? await this.#writer.apply(changes)
          : await this.#applyHere(db, changes);
      this.#stats.transactions += 1;
      this.#stats.changes += changes.length;
      this.#stats.rowsWritten += rows;
    } catch (err) {
      this.#stats.failures += 1;
      if (this.#readOnly !== undefined) throw this.#readOnly;
      throw failure(`failed to write dynamic plugin registry changes to ${this.path}`, err);
    }
    if (this.#readOnly !== undefined) this.#leaveReadOnly();
  }

  /**
   * No writer thread (before the first batch with `writerStart:
   * 'first-write'`, or after an idle pause, writerIdleStopMs): this batch is
   * written on the main connection instead of waiting about 50 ms for a new
   * thread, which starts now for the batches after it. Only this one batch:
   * the thread counts as running from the moment it is asked for.
   *
   * The commit leaves out its fsync (synchronous=NORMAL, no checkpoint: the
   * thread's next commit makes one), and the log is synced off the event loop
   * before the batch counts as written (syncWriteAheadLog). A FULL commit here
   * blocked the loop for its fsync, which waits for the file system's journal:
   * 15-55 ms at the start of a storm of 1,000, while the plugins' socket files
   * were being created on the same disk (issue 20).
   */
  async #applyHere(db: Db, changes: readonly RegistryChange[]): Promise<number> {
    void this.#writer.start().catch(() => undefined);
    // Prepared once per connection (the file may have been replaced and reopened since).
    if (this.#writeHere?.db !== db) this.#writeHere = { db, write: db.transaction(createChangeWriter(db)) };
    db.pragma('synchronous = NORMAL');
    db.pragma('wal_autocheckpoint = 0');
    let rows: number;
    try {
      rows = this.#writeHere.write(changes);
    } finally {
      db.pragma('synchronous = FULL');
      db.pragma(`wal_autocheckpoint = ${WAL_AUTOCHECKPOINT_PAGES}`);
    }
    await syncWriteAheadLog(this.path);
    this.#stats.inlineTransactions += 1;
    return rows;
  }

  /** A write landed: the disk has room again, so the real file replaces the in-memory copy. */
  #leaveReadOnly(): void {
    let db: Db | undefined;
    try {
      db = openDatabase(this.path, { timeout: this.#options.busyTimeoutMs, fileMustExist: true });
      this.#prepare(db, readSchemaVersion(db));
    } catch (err) {
      db?.close();
      this.#options.logger.warn(
        { err: errorMessage(err) },
        'state database still cannot be opened for writing',
      );
      return;
    }
    this.#db?.close();
    this.#db = db;
    this.#identity = fileIdentity(this.path);
    this.#readOnly = undefined;
    this.#options.logger.info({ path: this.path }, 'state database is writable again');
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
