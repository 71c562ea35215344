import type BetterSqlite3 from 'better-sqlite3';
import { BerthError, errorMessage, type PluginInstanceInfo } from '../common/index.js';
import { CorruptStateError } from './corrupt-state-error.js';
import { decodeInstance, encodeCheckedInstance, encodeInstance } from './instance-codec.js';
import { setOwn } from './own-record.js';
import type { RegistryChange, RegistryState } from './types.js';

/**
 * The row layout of the registry (schema version 3), shared by the main
 * thread (open, restore, import/export) and the writer thread (changes).
 */
type Db = BetterSqlite3.Database;

export const STATE_WRITTEN_KEY = 'registry_state_written';
const PROBE_KEY = 'last_write_probe';

interface InstanceRow {
  type: string;
  name: string;
  alloc_id: string;
  seq: number;
  info_json: string;
}

/** Reads and checks the whole state; throws CorruptStateError for anything that does not fit. */
export function readState(db: Db): RegistryState | undefined {
  const written = db.prepare('SELECT value FROM meta WHERE key = ?').pluck().get(STATE_WRITTEN_KEY);
  if (written === undefined) return undefined;
  const plugins: RegistryState['plugins'] = {};
  for (const type of db.prepare('SELECT type FROM plugin_types ORDER BY type').pluck().all() as string[]) {
    setOwn(plugins, type, {});
  }
  const names = db.prepare('SELECT type, name FROM plugin_names ORDER BY type, name').all() as Array<{
    type: string;
    name: string;
  }>;
  for (const { type, name } of names) {
    const byName = own(plugins, type);
    if (byName === undefined) throw new CorruptStateError(`plugin name ${name} has unknown type ${type}`);
    setOwn(byName, name, []);
  }
  const rows = db
    .prepare(
      'SELECT type, name, alloc_id, seq, info_json FROM plugin_instances ORDER BY type, name, seq DESC',
    )
    .all() as InstanceRow[];
  let previous: InstanceRow | undefined;
  for (const row of rows) {
    const byName = own(plugins, row.type);
    const list = byName === undefined ? undefined : own(byName, row.name);
    if (list === undefined) {
      throw new CorruptStateError(`instance row for unknown plugin ${row.name} (type ${row.type})`);
    }
    if (previous?.type === row.type && previous.name === row.name && previous.seq === row.seq) {
      throw new CorruptStateError(
        `two instances of plugin ${row.name} (type ${row.type}) share order key ${row.seq}, so their order is lost`,
      );
    }
    previous = row;
    list.push(decodeInstance(row.info_json, { type: row.type, name: row.name, allocId: row.alloc_id }));
  }
  return { plugins };
}

/** Replaces everything (import). Checks every instance first; the caller wraps it in a transaction. */
export function replaceState(db: Db, state: RegistryState): void {
  const rows = encodeState(state);
  db.exec('DELETE FROM plugin_instances; DELETE FROM plugin_names; DELETE FROM plugin_types;');
  const insertType = db.prepare('INSERT INTO plugin_types (type) VALUES (?)');
  const insertName = db.prepare('INSERT INTO plugin_names (type, name) VALUES (?, ?)');
  const insertInstance = db.prepare(
    'INSERT INTO plugin_instances (type, name, alloc_id, seq, info_json) VALUES (?, ?, ?, ?, ?)',
  );
  for (const type of rows.types) insertType.run(type);
  for (const [type, name] of rows.names) insertName.run(type, name);
  for (const r of rows.instances) insertInstance.run(r.type, r.name, r.alloc_id, r.seq, r.info_json);
  markWritten(db);
}

function markWritten(db: Db): number {
  return db.prepare('INSERT OR IGNORE INTO meta (key, value) VALUES (?, ?)').run(STATE_WRITTEN_KEY, '1')
    .changes;
}

/**
 * Prepares the statements of the incremental write path once per connection.
 * `apply` writes exactly the rows the changes touch, and returns how many rows
 * SQLite changed; the caller runs it inside one transaction.
 */
export function createChangeWriter(db: Db): (changes: readonly RegistryChange[]) => number {
  const insertType = db.prepare('INSERT OR IGNORE INTO plugin_types (type) VALUES (?)');
  const insertName = db.prepare('INSERT OR IGNORE INTO plugin_names (type, name) VALUES (?, ?)');
  // A new instance takes the next sequence of its own name: only that name's rows are looked at.
  const nextSeq =
    '(SELECT coalesce(max(seq), 0) + 1 FROM plugin_instances WHERE type = @type AND name = @name)';
  const putFront = db.prepare(
    `INSERT INTO plugin_instances (type, name, alloc_id, seq, info_json) VALUES (@type, @name, @allocId, ${nextSeq}, @json)
     ON CONFLICT (type, name, alloc_id) DO UPDATE SET seq = excluded.seq, info_json = excluded.info_json`,
  );
  const putInPlace = db.prepare(
    `INSERT INTO plugin_instances (type, name, alloc_id, seq, info_json) VALUES (@type, @name, @allocId, ${nextSeq}, @json)
     ON CONFLICT (type, name, alloc_id) DO UPDATE SET info_json = excluded.info_json`,
  );
  const deleteInstance = db.prepare(
    'DELETE FROM plugin_instances WHERE type = ? AND name = ? AND alloc_id = ?',
  );
  const deleteEmptyName = db.prepare(
    `DELETE FROM plugin_names WHERE type = @type AND name = @name
       AND NOT EXISTS (SELECT 1 FROM plugin_instances WHERE type = @type AND name = @name)`,
  );
  const probe = db.prepare('INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)');
  let marked = false;
  return (changes) => {
    let rows = 0;
    if (!marked) {
      rows += markWritten(db);
      marked = true;
    }
    if (changes.length === 0) rows += probe.run(PROBE_KEY, String(Date.now())).changes;
    for (const change of changes) {
      if (change.op === 'delete') {
        rows += deleteInstance.run(change.type, change.name, change.allocId).changes;
        rows += deleteEmptyName.run({ type: change.type, name: change.name }).changes;
        continue;
      }
      const { info } = change;
      const json = encodeCheckedInstance(info);
      rows += insertType.run(info.type).changes;
      rows += insertName.run(info.type, info.name).changes;
      rows += (change.front ? putFront : putInPlace).run({
        type: info.type,
        name: info.name,
        allocId: info.allocId,
        json,
      }).changes;
    }
    return rows;
  };
}

interface EncodedState {
  types: string[];
  names: Array<[string, string]>;
  instances: InstanceRow[];
}

function encodeState(state: RegistryState): EncodedState {
  const encoded: EncodedState = { types: [], names: [], instances: [] };
  if (
    typeof state !== 'object' ||
    state === null ||
    typeof state.plugins !== 'object' ||
    state.plugins === null
  ) {
    throw new BerthError('BERTH_INVALID_ARGUMENT', 'cannot store registry state: plugins map is missing');
  }
  for (const [type, byName] of Object.entries(state.plugins)) {
    encoded.types.push(type);
    for (const [name, list] of Object.entries(byName ?? {})) {
      encoded.names.push([type, name]);
      if (!Array.isArray(list)) {
        throw new BerthError(
          'BERTH_INVALID_ARGUMENT',
          `cannot store registry state: instances of plugin ${name} (type ${type}) are not a list`,
        );
      }
      const seen = new Set<string>();
      list.forEach((info: PluginInstanceInfo, position) => {
        if (typeof info !== 'object' || info === null || typeof info.allocId !== 'string') {
          throw new BerthError(
            'BERTH_INVALID_ARGUMENT',
            `cannot store registry state: instance ${position} of plugin ${name} (type ${type}) has no allocId`,
          );
        }
        if (seen.has(info.allocId)) {
          throw new BerthError(
            'BERTH_INVALID_ARGUMENT',
            `cannot store registry state: plugin ${name} (type ${type}) lists instance ${JSON.stringify(info.allocId)} twice`,
          );
        }
        seen.add(info.allocId);
        const json = encodeInstance(info);
        try {
          decodeInstance(json, { type, name, allocId: info.allocId });
        } catch (err) {
          throw new BerthError('BERTH_INVALID_ARGUMENT', `cannot store registry state: ${errorMessage(err)}`);
        }
        // Newest first in the list, highest sequence in the table.
        encoded.instances.push({
          type,
          name,
          alloc_id: info.allocId,
          seq: list.length - position,
          info_json: json,
        });
      });
    }
  }
  return encoded;
}

function own<T>(record: Record<string, T>, key: string): T | undefined {
  return Object.hasOwn(record, key) ? record[key] : undefined;
}
