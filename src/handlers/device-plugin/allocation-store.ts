/**
 * Durable device allocations, in their own small SQLite file (WAL,
 * synchronous=FULL: an allocation the API confirmed survives a power cut).
 * One row per (resource, workload). A row that cannot be decoded is reported
 * and skipped on load, never silently dropped from the file.
 *
 * On a disk too full to open the file, the allocations are read from an
 * in-memory copy and writes are refused (BERTH_STORAGE_FAILED, naming the
 * full disk) until the file can be opened again, which each write tries.
 * The file is never moved aside: it holds allocations that running
 * workloads use.
 */
import { chmodSync, closeSync, mkdirSync, openSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import { BerthError, errorMessage } from '../../common/index.js';
import {
  applyWalBounds,
  diskFullError,
  isDiskFull,
  openReadOnlyCopy,
  storeNotCreated,
} from '../../storage/index.js';
import type { AllocationResult } from './types.js';

export interface StoredAllocation {
  resource: string;
  workload: string;
  deviceIds: string[];
  result: AllocationResult;
  allocatedAt: number;
}

export interface LoadResult {
  allocations: StoredAllocation[];
  /** Rows that could not be read, each naming its key and the problem. */
  problems: string[];
}

const SCHEMA_VERSION = 1;

export class AllocationStore {
  /** Undefined until the file exists: a node that never allocated a device has no devices.db. */
  #db: Database.Database | undefined;
  #insert!: Database.Statement;
  #delete!: Database.Statement;
  /** Set while only an in-memory copy could be opened (a full disk): why writes fail. */
  #readOnly: BerthError | undefined;
  #closed = false;

  constructor(readonly path: string) {
    // Nothing was ever recorded: the first allocation creates the file (#write).
    if (storeNotCreated(path)) return;
    let db: Database.Database;
    try {
      db = openWritable(path);
    } catch (err) {
      if (err instanceof BerthError) throw err;
      if (!isDiskFull(err)) {
        throw new BerthError(
          'BERTH_STORAGE_FAILED',
          `cannot open device allocations ${path}: ${errorMessage(err)}; keep the file (it holds allocations in use) and fix what the error names`,
          { cause: err },
        );
      }
      this.#readOnly = diskFullError(`cannot open device allocations ${path}`, err, path);
      try {
        db = openReadOnlyCopy(path);
        if (!db.readonly) createSchema(db);
      } catch (copyErr) {
        throw new BerthError(
          'BERTH_STORAGE_FAILED',
          `${this.#readOnly.message}; a read-only copy could not be read either (${errorMessage(copyErr)}): free some space and start again (keep the file: it holds allocations in use)`,
          { cause: err },
        );
      }
    }
    this.#db = db;
    this.#prepareStatements(db);
  }

  /** Why writes are refused, while the store runs from a read-only copy. */
  get readOnly(): BerthError | undefined {
    return this.#readOnly;
  }

  #prepareStatements(db: Database.Database): void {
    this.#insert = db.prepare(
      'INSERT INTO allocations (resource, workload, device_ids, result, allocated_at) VALUES (?, ?, ?, ?, ?)',
    );
    this.#delete = db.prepare('DELETE FROM allocations WHERE resource = ? AND workload = ?');
  }

  /** Swaps the read-only copy for the real file once it opens; throws the full-disk error while it does not. */
  #leaveReadOnly(reason: BerthError): void {
    let db: Database.Database;
    try {
      db = openWritable(this.path);
    } catch (err) {
      throw isDiskFull(err)
        ? diskFullError(`writing device allocations ${this.path} failed`, err, this.path)
        : reason;
    }
    this.#db?.close();
    this.#db = db;
    this.#readOnly = undefined;
    this.#prepareStatements(db);
  }

  /** The first write of a store that had no file: creates it (owner-only, WAL, the schema). */
  #create(): void {
    let db: Database.Database;
    try {
      db = openWritable(this.path);
    } catch (err) {
      if (isDiskFull(err))
        throw diskFullError(`creating device allocations ${this.path} failed`, err, this.path);
      throw BerthError.from(err, 'BERTH_STORAGE_FAILED', `cannot create device allocations ${this.path}`);
    }
    this.#db = db;
    this.#prepareStatements(db);
  }

  load(): LoadResult {
    if (this.#db === undefined) return { allocations: [], problems: [] };
    const rows = this.#db
      .prepare('SELECT resource, workload, device_ids, result, allocated_at FROM allocations ORDER BY rowid')
      .all() as Array<{
      resource: string;
      workload: string;
      device_ids: string;
      result: string;
      allocated_at: number;
    }>;
    const allocations: StoredAllocation[] = [];
    const problems: string[] = [];
    for (const row of rows) {
      try {
        const deviceIds = JSON.parse(row.device_ids) as unknown;
        const result = JSON.parse(row.result) as AllocationResult;
        if (!Array.isArray(deviceIds) || !deviceIds.every((id) => typeof id === 'string')) {
          throw new Error('device_ids is not a list of strings');
        }
        if (typeof result !== 'object' || result === null) throw new Error('result is not an object');
        allocations.push({
          resource: row.resource,
          workload: row.workload,
          deviceIds,
          result,
          allocatedAt: row.allocated_at,
        });
      } catch (err) {
        problems.push(`allocation ${row.resource}/${row.workload}: ${errorMessage(err)}`);
      }
    }
    return { allocations, problems };
  }

  add(allocation: StoredAllocation): void {
    this.#write(() =>
      this.#insert.run(
        allocation.resource,
        allocation.workload,
        JSON.stringify(allocation.deviceIds),
        JSON.stringify(allocation.result),
        allocation.allocatedAt,
      ),
    );
  }

  remove(resource: string, workload: string): boolean {
    return this.#write(() => this.#delete.run(resource, workload).changes > 0);
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#db?.close();
  }

  #write<T>(run: () => T): T {
    if (this.#readOnly !== undefined) this.#leaveReadOnly(this.#readOnly);
    else if (this.#db === undefined) this.#create();
    try {
      return run();
    } catch (err) {
      if (isDiskFull(err))
        throw diskFullError(`writing device allocations ${this.path} failed`, err, this.path);
      throw BerthError.from(err, 'BERTH_STORAGE_FAILED', `writing device allocations ${this.path} failed`);
    }
  }
}

function openWritable(path: string): Database.Database {
  if (path !== ':memory:') {
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    // Owner-only whatever the umask, as state.db: SQLite gives its -wal and -shm files the same mode.
    closeSync(openSync(path, 'a', 0o600));
    chmodSync(path, 0o600);
  }
  const db = new Database(path);
  try {
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = FULL');
    applyWalBounds(db);
    const version = db.pragma('user_version', { simple: true }) as number;
    if (version > SCHEMA_VERSION) {
      throw new BerthError(
        'BERTH_STORAGE_VERSION',
        `device allocations ${path} have schema version ${version}; this berth reads up to ${SCHEMA_VERSION}`,
      );
    }
    if (version < SCHEMA_VERSION) createSchema(db);
    return db;
  } catch (err) {
    db.close();
    throw err;
  }
}

function createSchema(db: Database.Database): void {
  db.exec(`CREATE TABLE IF NOT EXISTS allocations (
    resource TEXT NOT NULL,
    workload TEXT NOT NULL,
    device_ids TEXT NOT NULL,
    result TEXT NOT NULL,
    allocated_at INTEGER NOT NULL,
    PRIMARY KEY (resource, workload)
  )`);
  db.pragma(`user_version = ${SCHEMA_VERSION}`);
}
