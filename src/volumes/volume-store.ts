/**
 * Durable CSI volume state, in its own small SQLite file beside state.db
 * (WAL, synchronous=FULL, owner-only, like the device allocations): the
 * volumes berth created, each volume's attachment on this node (controller
 * published? staged where?) and each publication (volume, workload). This is
 * the usage tracker Nomad keeps only in memory: after a restart berth rebuilds
 * the reference counts from here, never from nothing (nomad#25813). Paths are
 * stored as they were used, never recomputed at teardown (nomad#9259).
 * A row that cannot be decoded is reported and skipped, never deleted.
 */
import { type BerthError, errorMessage } from '../common/index.js';
import { SmallSqliteFile } from '../storage/index.js';
import type { PublishOptions } from './types.js';

export interface StoredVolume {
  driver: string;
  volumeId: string;
  name: string;
  capacityBytes: number;
  volumeContext: Record<string, string>;
  accessibleTopology: Array<Record<string, string>>;
  createdAt: number;
}

/** One volume on this node: what must be undone when its last publication goes. */
export interface StoredAttachment {
  driver: string;
  volumeId: string;
  nodeId: string;
  controllerPublished: boolean;
  publishContext: Record<string, string>;
  /** Set once NodeStageVolume succeeded (or may have: an uncertain outcome keeps it, so unstage runs). */
  stagingPath: string | null;
}

/** `pending`: NodePublish sent, outcome not yet recorded; `published`: it succeeded. */
export type PublicationState = 'pending' | 'published';

export interface StoredPublication {
  driver: string;
  volumeId: string;
  workload: string;
  targetPath: string;
  options: PublishOptions;
  state: PublicationState;
  publishedAt: number;
}

export interface VolumeStoreContents {
  volumes: StoredVolume[];
  attachments: StoredAttachment[];
  publications: StoredPublication[];
  /** Rows that could not be read, each naming its key and the problem. */
  problems: string[];
}

function record(text: string, what: string): Record<string, string> {
  const value = JSON.parse(text) as unknown;
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new Error(`${what} is not an object`);
  return value as Record<string, string>;
}

export class VolumeStore {
  readonly #file: SmallSqliteFile;

  constructor(readonly path: string) {
    this.#file = new SmallSqliteFile({
      path,
      what: 'CSI volume state',
      keep: 'it records volumes that are mounted',
      schemaVersion: 1,
      createSchema: (db) =>
        db.exec(`
          CREATE TABLE IF NOT EXISTS volumes (
            driver TEXT NOT NULL, volume_id TEXT NOT NULL, name TEXT NOT NULL,
            capacity_bytes INTEGER NOT NULL, volume_context TEXT NOT NULL, topology TEXT NOT NULL,
            created_at INTEGER NOT NULL, PRIMARY KEY (driver, volume_id));
          CREATE TABLE IF NOT EXISTS attachments (
            driver TEXT NOT NULL, volume_id TEXT NOT NULL, node_id TEXT NOT NULL,
            controller_published INTEGER NOT NULL, publish_context TEXT NOT NULL, staging_path TEXT,
            PRIMARY KEY (driver, volume_id));
          CREATE TABLE IF NOT EXISTS publications (
            driver TEXT NOT NULL, volume_id TEXT NOT NULL, workload TEXT NOT NULL,
            target_path TEXT NOT NULL, options TEXT NOT NULL, state TEXT NOT NULL,
            published_at INTEGER NOT NULL, PRIMARY KEY (driver, volume_id, workload));`),
    });
  }

  /** Why writes are refused, while the store reads from an in-memory copy (a full disk at start). */
  get readOnly(): BerthError | undefined {
    return this.#file.readOnly;
  }

  load(): VolumeStoreContents {
    const problems: string[] = [];
    const db = this.#file.db;
    if (db === undefined) return { volumes: [], attachments: [], publications: [], problems };
    const volumes: StoredVolume[] = [];
    for (const row of db.prepare('SELECT * FROM volumes ORDER BY rowid').all() as Array<
      Record<string, unknown>
    >) {
      try {
        volumes.push({
          driver: String(row.driver),
          volumeId: String(row.volume_id),
          name: String(row.name),
          capacityBytes: Number(row.capacity_bytes),
          volumeContext: record(String(row.volume_context), 'volume_context'),
          accessibleTopology: JSON.parse(String(row.topology)) as Array<Record<string, string>>,
          createdAt: Number(row.created_at),
        });
      } catch (err) {
        problems.push(`volume ${String(row.driver)}/${String(row.volume_id)}: ${errorMessage(err)}`);
      }
    }
    const attachments: StoredAttachment[] = [];
    for (const row of db.prepare('SELECT * FROM attachments ORDER BY rowid').all() as Array<
      Record<string, unknown>
    >) {
      try {
        attachments.push({
          driver: String(row.driver),
          volumeId: String(row.volume_id),
          nodeId: String(row.node_id),
          controllerPublished: row.controller_published === 1,
          publishContext: record(String(row.publish_context), 'publish_context'),
          stagingPath: row.staging_path === null ? null : String(row.staging_path),
        });
      } catch (err) {
        problems.push(`attachment ${String(row.driver)}/${String(row.volume_id)}: ${errorMessage(err)}`);
      }
    }
    const publications: StoredPublication[] = [];
    for (const row of db.prepare('SELECT * FROM publications ORDER BY rowid').all() as Array<
      Record<string, unknown>
    >) {
      try {
        const options = JSON.parse(String(row.options)) as PublishOptions;
        if (typeof options !== 'object' || options === null) throw new Error('options is not an object');
        const state = String(row.state);
        if (state !== 'pending' && state !== 'published') throw new Error(`unknown state ${state}`);
        publications.push({
          driver: String(row.driver),
          volumeId: String(row.volume_id),
          workload: String(row.workload),
          targetPath: String(row.target_path),
          options,
          state,
          publishedAt: Number(row.published_at),
        });
      } catch (err) {
        problems.push(
          `publication ${String(row.driver)}/${String(row.volume_id)}/${String(row.workload)}: ${errorMessage(err)}`,
        );
      }
    }
    return { volumes, attachments, publications, problems };
  }

  putVolume(v: StoredVolume): void {
    this.#write(
      'INSERT OR REPLACE INTO volumes VALUES (?, ?, ?, ?, ?, ?, ?)',
      v.driver,
      v.volumeId,
      v.name,
      v.capacityBytes,
      JSON.stringify(v.volumeContext),
      JSON.stringify(v.accessibleTopology),
      v.createdAt,
    );
  }

  deleteVolume(driver: string, volumeId: string): void {
    this.#write('DELETE FROM volumes WHERE driver = ? AND volume_id = ?', driver, volumeId);
  }

  putAttachment(a: StoredAttachment): void {
    this.#write(
      'INSERT OR REPLACE INTO attachments VALUES (?, ?, ?, ?, ?, ?)',
      a.driver,
      a.volumeId,
      a.nodeId,
      a.controllerPublished ? 1 : 0,
      JSON.stringify(a.publishContext),
      a.stagingPath,
    );
  }

  deleteAttachment(driver: string, volumeId: string): void {
    this.#write('DELETE FROM attachments WHERE driver = ? AND volume_id = ?', driver, volumeId);
  }

  putPublication(p: StoredPublication): void {
    this.#write(
      'INSERT OR REPLACE INTO publications VALUES (?, ?, ?, ?, ?, ?, ?)',
      p.driver,
      p.volumeId,
      p.workload,
      p.targetPath,
      JSON.stringify(p.options),
      p.state,
      p.publishedAt,
    );
  }

  deletePublication(driver: string, volumeId: string, workload: string): void {
    this.#write(
      'DELETE FROM publications WHERE driver = ? AND volume_id = ? AND workload = ?',
      driver,
      volumeId,
      workload,
    );
  }

  close(): void {
    this.#file.close();
  }

  #write(sql: string, ...params: unknown[]): void {
    this.#file.write((db) => db.prepare(sql).run(...params));
  }
}
