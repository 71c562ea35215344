import type BetterSqlite3 from 'better-sqlite3';
import { CorruptStateError } from './corrupt-state-error.js';

type Db = BetterSqlite3.Database;

/**
 * One step of the schema. Steps run in order, all pending ones in a single
 * transaction together with the version bump, so a crash mid-upgrade leaves
 * the old schema intact. Never edit a released step: add the next one.
 */
export interface Migration {
  version: number;
  description: string;
  up(db: Db): void;
}

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    description: 'meta table, plugin types, and instance rows with explicit positions',
    up(db) {
      db.exec(`
        CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) STRICT;
        CREATE TABLE plugin_types (type TEXT PRIMARY KEY) STRICT;
        CREATE TABLE plugin_instances (
          type TEXT NOT NULL,
          name TEXT NOT NULL,
          position INTEGER NOT NULL,
          alloc_id TEXT NOT NULL,
          info_json TEXT NOT NULL,
          PRIMARY KEY (type, name, position)
        ) STRICT;
      `);
    },
  },
  {
    // Version 1 knew a name only through its instances, so a name whose last
    // instance went away vanished on restart. Version 2 stores names
    // explicitly and backfills them from the instances already stored.
    version: 2,
    description: 'explicit plugin names, backfilled from stored instances',
    up(db) {
      db.exec(`
        CREATE TABLE plugin_names (
          type TEXT NOT NULL,
          name TEXT NOT NULL,
          PRIMARY KEY (type, name)
        ) STRICT;
        INSERT INTO plugin_names (type, name) SELECT DISTINCT type, name FROM plugin_instances;
        INSERT OR IGNORE INTO plugin_types (type) SELECT DISTINCT type FROM plugin_instances;
      `);
    },
  },
  {
    // Versions 1 and 2 ordered a name's instances by a dense position, so adding
    // an instance at the front renumbered every row and berth rewrote the whole
    // registry on each change. Version 3 keys an instance by (type, name,
    // alloc_id) and orders it by a per-name sequence (higher is newer), so one
    // change writes one row. Positions convert to sequences newest-highest.
    version: 3,
    description: 'instances keyed by alloc id and ordered by a per-name sequence (one row per change)',
    up(db) {
      db.exec(`
        CREATE TABLE plugin_instances_v3 (
          type TEXT NOT NULL,
          name TEXT NOT NULL,
          alloc_id TEXT NOT NULL,
          seq INTEGER NOT NULL,
          info_json TEXT NOT NULL,
          PRIMARY KEY (type, name, alloc_id)
        ) STRICT;
        INSERT OR IGNORE INTO plugin_instances_v3 (type, name, alloc_id, seq, info_json)
          SELECT type, name, alloc_id,
                 (SELECT max(position) FROM plugin_instances AS m WHERE m.type = p.type AND m.name = p.name)
                   - position + 1,
                 info_json
          FROM plugin_instances AS p ORDER BY type, name, position;
        DROP TABLE plugin_instances;
        ALTER TABLE plugin_instances_v3 RENAME TO plugin_instances;
      `);
    },
  },
];

/** The schema version this build writes. */
export const SCHEMA_VERSION: number = MIGRATIONS[MIGRATIONS.length - 1]?.version ?? 0;

const VERSION_KEY = 'schema_version';

/** 0 for a database berth never initialised (no meta table). */
export function readSchemaVersion(db: Db): number {
  const hasMeta = db
    .prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'meta'")
    .pluck()
    .get();
  if (hasMeta === undefined) return 0;
  const raw = db.prepare('SELECT value FROM meta WHERE key = ?').pluck().get(VERSION_KEY);
  if (raw === undefined) throw new CorruptStateError('meta table has no schema_version');
  const version = Number(raw);
  if (typeof raw !== 'string' || !Number.isInteger(version) || version < 1) {
    throw new CorruptStateError(`meta schema_version ${JSON.stringify(raw)} is not a positive integer`);
  }
  return version;
}

/** Applies every step after `from`, atomically. */
export function migrate(db: Db, from: number, migrations: readonly Migration[] = MIGRATIONS): number {
  const pending = migrations.filter((m) => m.version > from);
  if (pending.length === 0) return from;
  let reached = from;
  db.transaction(() => {
    for (const step of pending) {
      step.up(db);
      reached = step.version;
    }
    db.prepare('INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)').run(VERSION_KEY, String(reached));
  })();
  return reached;
}
