import { closeSync, fdatasync, fdatasyncSync, fstatSync, openSync } from 'node:fs';
import { dirname } from 'node:path';
import { promisify } from 'node:util';
import type BetterSqlite3 from 'better-sqlite3';
import { createChangeWriter } from './sqlite-rows.js';
import { WAL_SIZE_LIMIT_BYTES } from './sqlite-wal.js';
import type { RegistryChange } from './types.js';

const datasync = promisify(fdatasync);

type Db = BetterSqlite3.Database;

/** `PRAGMA wal_checkpoint`'s row: refused by a lock (1 or 0), frames in the log, frames copied into the file. */
interface CheckpointResult {
  busy: number;
  log: number;
  checkpointed: number;
}

interface Connection {
  db: Db;
  write: (changes: readonly RegistryChange[]) => number;
  /**
   * The database file, held open until the connection is closed: closing a
   * descriptor of a file drops every POSIX lock the process holds on it,
   * SQLite's included.
   */
  file: number;
  /** The write-ahead log, opened after the first commit (SQLite keeps no POSIX lock on it). */
  log: number | undefined;
  /** The directory entry of this connection's log has been synced (SQLite does it once per new log). */
  logNamed: boolean;
}

/**
 * Commits registry batches on the storage's own connection, with every
 * fsync on libuv's thread pool instead of the event loop.
 *
 * The connection runs with `synchronous=OFF` and no automatic checkpoint, so
 * SQLite itself never syncs. In WAL mode the syncs it would make are: the log
 * after each commit (FULL), the log before a checkpoint and the database file
 * after it, and the log's header when a checkpointed log is reused (NORMAL).
 * They are made here, in an order that keeps an acknowledged batch durable:
 *
 * - after each commit, the log (and, once per new log, its directory) is
 *   fdatasynced before the batch resolves;
 * - once the log outgrows `WAL_SIZE_LIMIT_BYTES`, a checkpoint copies it
 *   into the database file, the file is fdatasynced, and only then is the log
 *   emptied (truncated) and fdatasynced, all before the next commit may
 *   start. The next log then begins in an empty file, where no older frame
 *   can be taken for one of it, which is why its header needs no sync of its
 *   own;
 * - a checkpoint that another process's reader keeps from emptying the log
 *   leaves the next commit to SQLite's own header sync (`synchronous=NORMAL`
 *   for that one commit, on the loop: rare).
 *
 * Batches are committed one at a time, in the order they were asked for.
 * Before this, a writer thread committed with `synchronous=FULL`: it cost a
 * storm of 1,000 plugins about 0.12 CPU-s to boot after each idle stop, and
 * every batch a structured clone and two thread wake-ups (issue 20).
 */
export class OffLoopCommit {
  readonly #path: string;
  #connection: Connection | undefined;
  /** The last write, or the last checkpoint's syncs: the next write starts after it. */
  #tail: Promise<unknown> = Promise.resolve();
  /** A checkpoint copied pages into the database file, and the file has not been synced since. */
  #fileUnsynced = false;
  /**
   * The log may be reused without having been emptied and synced (a reader
   * kept it from being emptied, a sync failed): the next commit lets SQLite
   * sync the new log's header (synchronous=NORMAL for that commit).
   */
  #headerUnsynced = false;
  /** The last commit failed (a full disk?): the next one first tries to empty the log. */
  #failed = false;
  /** Commits made, so a checkpoint sees one made while it waited for its sync. */
  #commits = 0;

  constructor(path: string) {
    this.#path = path;
  }

  /** Applies one batch in one transaction on `db`; resolves, with the rows SQLite changed, once it is durable. */
  write(db: Db, changes: readonly RegistryChange[]): Promise<number> {
    const written = this.#tail.then(() => this.#write(db, changes));
    this.#tail = written.then(
      () => this.#checkpointIfLong(),
      () => undefined,
    );
    return written;
  }

  async #write(db: Db, changes: readonly RegistryChange[]): Promise<number> {
    const connection = this.#use(db);
    this.#syncFileHere(connection);
    if (this.#failed) {
      // Best effort: on a still-full disk the commit below fails and says so.
      await this.#checkpoint(connection).catch(() => undefined);
      this.#syncFileHere(connection);
    }
    const header = this.#headerUnsynced;
    if (header) db.pragma('synchronous = NORMAL');
    let rows: number;
    try {
      rows = connection.write(changes);
      this.#commits += 1;
    } catch (err) {
      this.#failed = true;
      throw err;
    } finally {
      if (header) db.pragma('synchronous = OFF');
    }
    this.#headerUnsynced = false;
    await this.#syncLog(connection);
    this.#failed = false;
    return rows;
  }

  /** After a batch resolved: a log past its bound is emptied before the next batch (which waits for it). */
  async #checkpointIfLong(): Promise<void> {
    const connection = this.#connection;
    if (connection?.log === undefined || !connection.db.open) return;
    if (fstatSync(connection.log).size <= WAL_SIZE_LIMIT_BYTES) return;
    // A failed sync leaves #fileUnsynced set: the next write syncs the file on the loop.
    await this.#checkpoint(connection).catch(() => undefined);
  }

  /**
   * Runs a synchronous write (a whole-state import) on `db` as SQLite's FULL
   * would: its commit's fsyncs on the loop, after a checkpoint's that are
   * still in flight.
   */
  writeHere<T>(db: Db, write: () => T): T {
    const connection = this.#use(db);
    this.#syncFileHere(connection);
    db.pragma('synchronous = FULL');
    try {
      const result = write();
      this.#commits += 1;
      return result;
    } finally {
      db.pragma('synchronous = OFF');
    }
  }

  /**
   * Closes `db` after the writes and checkpoint in flight, with SQLite's own
   * syncs back on (its closing checkpoint syncs the file before it deletes the log).
   */
  async close(db: Db): Promise<void> {
    await this.#tail.catch(() => undefined);
    if (db.open) {
      try {
        db.pragma('synchronous = FULL');
      } catch {
        // A connection that cannot even set a pragma is closed all the same.
      }
      db.close();
    }
    this.forget(db);
  }

  /** Lets go of a connection that was closed (its file deleted, set aside or replaced). */
  forget(db: Db): void {
    const connection = this.#connection;
    if (connection?.db !== db) return;
    this.#connection = undefined;
    // The flags stay: they are about the file, which the next connection may open again.
    for (const fd of [connection.file, connection.log]) {
      if (fd === undefined) continue;
      try {
        closeSync(fd);
      } catch {}
    }
  }

  #use(db: Db): Connection {
    const current = this.#connection;
    if (current?.db === db) return current;
    if (current !== undefined) this.forget(current.db);
    db.pragma('synchronous = OFF');
    db.pragma('wal_autocheckpoint = 0');
    const writeRows = createChangeWriter(db);
    const connection: Connection = {
      db,
      write: db.transaction((changes: readonly RegistryChange[]) => writeRows(changes)),
      file: openSync(this.#path, 'r'),
      log: undefined,
      logNamed: false,
    };
    this.#connection = connection;
    return connection;
  }

  async #syncLog(connection: Connection): Promise<void> {
    connection.log ??= openSync(`${this.#path}-wal`, 'r');
    if (connection.logNamed) {
      await datasync(connection.log);
      return;
    }
    await Promise.all([datasync(connection.log), syncDirectory(dirname(this.#path))]);
    connection.logNamed = true;
  }

  /**
   * Empties the log into the database file, never waiting for a reader, in
   * SQLite's order: the pages copied into the file (a PASSIVE checkpoint),
   * the file synced, and only then the log emptied (a TRUNCATE checkpoint,
   * which finds nothing left to copy) and synced. Emptied first, a crash
   * could keep the empty log and lose the copy the disk never got.
   */
  async #checkpoint(connection: Connection): Promise<void> {
    const { db } = connection;
    // Until the end: the file may hold pages the disk does not, and the next
    // commit may reuse a log that still holds older frames.
    this.#fileUnsynced = true;
    this.#headerUnsynced = true;
    const commits = this.#commits;
    const [copied] = this.#walCheckpoint(db, 'PASSIVE');
    await datasync(connection.file);
    this.#fileUnsynced = false;
    if (copied === undefined || copied.busy !== 0 || copied.checkpointed !== copied.log) return;
    // A synchronous write (writeHere) committed meanwhile: its frames are not in the synced file.
    if (this.#commits !== commits || !db.open) return;
    const [emptied] = this.#walCheckpoint(db, 'TRUNCATE');
    if (emptied === undefined || emptied.busy !== 0) return;
    if (connection.log !== undefined) await datasync(connection.log);
    this.#headerUnsynced = false;
  }

  /** One checkpoint that never waits for another connection (its busy handler off meanwhile). */
  #walCheckpoint(db: Db, mode: 'PASSIVE' | 'TRUNCATE'): CheckpointResult[] {
    const timeout = db.pragma('busy_timeout', { simple: true }) as number;
    db.pragma('busy_timeout = 0');
    try {
      return db.pragma(`wal_checkpoint(${mode})`) as CheckpointResult[];
    } finally {
      db.pragma(`busy_timeout = ${timeout}`);
    }
  }

  /** The database file's fdatasync on the loop, while a checkpoint's is in flight or failed. */
  #syncFileHere(connection: Connection): void {
    if (!this.#fileUnsynced) return;
    fdatasyncSync(connection.file);
    this.#fileUnsynced = false;
  }
}

async function syncDirectory(path: string): Promise<void> {
  const fd = openSync(path, 'r');
  try {
    await datasync(fd);
  } finally {
    closeSync(fd);
  }
}
