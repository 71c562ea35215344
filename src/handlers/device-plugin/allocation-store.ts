/**
 * Durable device allocations, in their own small SQLite file (WAL,
 * synchronous=FULL: an allocation the API confirmed survives a power cut).
 * One row per (resource, workload). A row that cannot be decoded is reported
 * and skipped on load, never silently dropped from the file.
 */
import { chmodSync, closeSync, mkdirSync, openSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import { BerthError, errorMessage } from '../../common/index.js';
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
  readonly #db: Database.Database;
  readonly #insert: Database.Statement;
  readonly #delete: Database.Statement;
  #closed = false;

  constructor(readonly path: string) {
    try {
      if (path !== ':memory:') {
        mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
        // Owner-only whatever the umask, as state.db: SQLite gives its -wal and -shm files the same mode.
        closeSync(openSync(path, 'a', 0o600));
        chmodSync(path, 0o600);
      }
      this.#db = new Database(path);
      this.#db.pragma('journal_mode = WAL');
      this.#db.pragma('synchronous = FULL');
      const version = this.#db.pragma('user_version', { simple: true }) as number;
      if (version > SCHEMA_VERSION) {
        throw new BerthError(
          'BERTH_STORAGE_VERSION',
          `device allocations ${path} have schema version ${version}; this berth reads up to ${SCHEMA_VERSION}`,
        );
      }
      this.#db.exec(`CREATE TABLE IF NOT EXISTS allocations (
        resource TEXT NOT NULL,
        workload TEXT NOT NULL,
        device_ids TEXT NOT NULL,
        result TEXT NOT NULL,
        allocated_at INTEGER NOT NULL,
        PRIMARY KEY (resource, workload)
      )`);
      this.#db.pragma(`user_version = ${SCHEMA_VERSION}`);
      this.#insert = this.#db.prepare(
        'INSERT INTO allocations (resource, workload, device_ids, result, allocated_at) VALUES (?, ?, ?, ?, ?)',
      );
      this.#delete = this.#db.prepare('DELETE FROM allocations WHERE resource = ? AND workload = ?');
    } catch (err) {
      if (err instanceof BerthError) throw err;
      throw new BerthError(
        'BERTH_STORAGE_FAILED',
        `cannot open device allocations ${path}: ${errorMessage(err)}; move the file aside to start without allocations`,
        { cause: err },
      );
    }
  }

  load(): LoadResult {
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
    this.#db.close();
  }

  #write<T>(run: () => T): T {
    try {
      return run();
    } catch (err) {
      throw new BerthError(
        'BERTH_STORAGE_FAILED',
        `writing device allocations ${this.path} failed: ${errorMessage(err)}`,
        {
          cause: err,
        },
      );
    }
  }
}
