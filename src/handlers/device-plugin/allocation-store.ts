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
import { type BerthError, errorMessage } from '../../common/index.js';
import { SmallSqliteFile } from '../../storage/index.js';
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

const INSERT =
  'INSERT INTO allocations (resource, workload, device_ids, result, allocated_at) VALUES (?, ?, ?, ?, ?)';
const DELETE = 'DELETE FROM allocations WHERE resource = ? AND workload = ?';

export class AllocationStore {
  readonly #file: SmallSqliteFile;

  constructor(readonly path: string) {
    this.#file = new SmallSqliteFile({
      path,
      what: 'device allocations',
      keep: 'it holds allocations in use',
      schemaVersion: 1,
      createSchema: (db) =>
        db.exec(`CREATE TABLE IF NOT EXISTS allocations (
          resource TEXT NOT NULL,
          workload TEXT NOT NULL,
          device_ids TEXT NOT NULL,
          result TEXT NOT NULL,
          allocated_at INTEGER NOT NULL,
          PRIMARY KEY (resource, workload)
        )`),
    });
  }

  /** Why writes are refused, while the store reads from an in-memory copy (a full disk). */
  get readOnly(): BerthError | undefined {
    return this.#file.readOnly;
  }

  load(): LoadResult {
    const db = this.#file.db;
    if (db === undefined) return { allocations: [], problems: [] };
    const rows = db
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
    this.#file.write((db) =>
      db
        .prepare(INSERT)
        .run(
          allocation.resource,
          allocation.workload,
          JSON.stringify(allocation.deviceIds),
          JSON.stringify(allocation.result),
          allocation.allocatedAt,
        ),
    );
  }

  remove(resource: string, workload: string): boolean {
    return this.#file.write((db) => db.prepare(DELETE).run(resource, workload).changes > 0);
  }

  close(): void {
    this.#file.close();
  }
}
