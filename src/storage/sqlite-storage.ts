import { closeSync, existsSync, mkdirSync, openSync, readSync, renameSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import {
  BerthError,
  type Clock,
  errorMessage,
  isBerthError,
  type Logger,
  type PluginInstanceInfo,
  silentLogger,
  systemClock,
} from '../common/index.js';
import { CorruptStateError } from './corrupt-state-error.js';
import { decodeInstance, encodeInstance } from './instance-codec.js';
import { setOwn } from './own-record.js';
import { migrate, readSchemaVersion, SCHEMA_VERSION } from './sqlite-migrations.js';
import type { RegistryState, StateStorage, StorageCorruptionReport } from './types.js';

type Db = Database.Database;

export interface SqliteStorageOptions {
  /** The database file, e.g. `<data-dir>/state.db`. Its directory is created if missing. */
  path: string;
  logger?: Logger;
  /** Used for the timestamp of a set-aside file. */
  clock?: Clock;
  /** Told when a corrupt or unreadable database was moved aside (also logged). */
  onCorrupt?: (report: StorageCorruptionReport) => void;
}

export interface SqliteStorage extends StateStorage {
  readonly path: string;
  /** The schema version of the open database (after migrations). */
  readonly schemaVersion: number;
  /** The last corruption set aside by this storage, for status displays. */
  readonly corruption?: StorageCorruptionReport | undefined;
}

/**
 * Opens (creating or migrating as needed) the SQLite state database.
 * Throws BERTH_STORAGE_VERSION, without touching the file, when it was written
 * by a newer berth, and BERTH_STORAGE_FAILED when it cannot be opened at all.
 * A corrupt file is moved aside and replaced by an empty database; the first
 * getDynamicPluginRegistryState() then throws BERTH_STORAGE_CORRUPT once.
 */
export function openSqliteStorage(options: SqliteStorageOptions): SqliteStorage {
  return new SqliteStateStorage({
    path: options.path,
    logger: options.logger ?? silentLogger,
    clock: options.clock ?? systemClock,
    onCorrupt: options.onCorrupt,
  });
}

interface ResolvedOptions {
  path: string;
  logger: Logger;
  clock: Clock;
  onCorrupt: ((report: StorageCorruptionReport) => void) | undefined;
}

const STATE_WRITTEN_KEY = 'registry_state_written';

interface InstanceRow {
  type: string;
  name: string;
  position: number;
  alloc_id: string;
  info_json: string;
}

class SqliteStateStorage implements SqliteStorage {
  readonly path: string;
  readonly #options: ResolvedOptions;
  #db: Db | undefined;
  #schemaVersion = 0;
  #corruption: StorageCorruptionReport | undefined;
  /** Corruption found while opening, handed to the first reader of the state. */
  #unreported: BerthError | undefined;
  #closed = false;

  constructor(options: ResolvedOptions) {
    this.#options = options;
    this.path = options.path;
    this.#db = this.#open();
  }

  get schemaVersion(): number {
    return this.#schemaVersion;
  }

  get corruption(): StorageCorruptionReport | undefined {
    return this.#corruption;
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
      throw error;
    }
  }

  putDynamicPluginRegistryState(state: RegistryState): void {
    const db = this.#requireOpen();
    const rows = encodeState(state);
    try {
      db.transaction(() => {
        db.exec('DELETE FROM plugin_instances; DELETE FROM plugin_names; DELETE FROM plugin_types;');
        const insertType = db.prepare('INSERT INTO plugin_types (type) VALUES (?)');
        const insertName = db.prepare('INSERT INTO plugin_names (type, name) VALUES (?, ?)');
        const insertInstance = db.prepare(
          'INSERT INTO plugin_instances (type, name, position, alloc_id, info_json) VALUES (?, ?, ?, ?, ?)',
        );
        for (const type of rows.types) insertType.run(type);
        for (const [type, name] of rows.names) insertName.run(type, name);
        for (const r of rows.instances)
          insertInstance.run(r.type, r.name, r.position, r.alloc_id, r.info_json);
        db.prepare('INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)').run(STATE_WRITTEN_KEY, '1');
      })();
    } catch (err) {
      throw failure(`failed to write dynamic plugin registry state to ${this.path}`, err);
    }
  }

  close(): void {
    this.#closed = true;
    const db = this.#db;
    this.#db = undefined;
    db?.close();
  }

  #requireOpen(): Db {
    if (this.#db === undefined) {
      throw new BerthError(
        'BERTH_STORAGE_FAILED',
        this.#closed ? 'state storage is closed' : `state database ${this.path} is not open`,
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
      return this.#openExisting();
    } catch (err) {
      if (isBerthError(err)) throw err;
      if (!isCorruption(err)) throw failure(`cannot open state database ${this.path}`, err);
      this.#unreported = this.#setAside(err);
      return this.#openFresh();
    }
  }

  #openExisting(): Db {
    // Checked before SQLite opens the file: SQLite would delete a stray -wal next to a non-database.
    checkHeader(this.path);
    const db = new Database(this.path, { timeout: 5000 });
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
      db = new Database(this.path, { timeout: 5000 });
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

function readState(db: Db): RegistryState | undefined {
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
      'SELECT type, name, position, alloc_id, info_json FROM plugin_instances ORDER BY type, name, position',
    )
    .all() as InstanceRow[];
  for (const row of rows) {
    const byName = own(plugins, row.type);
    const list = byName === undefined ? undefined : own(byName, row.name);
    if (list === undefined) {
      throw new CorruptStateError(`instance row for unknown plugin ${row.name} (type ${row.type})`);
    }
    if (row.position !== list.length) {
      throw new CorruptStateError(
        `instance positions of plugin ${row.name} (type ${row.type}) are not 0..n-1 (found ${row.position} at ${list.length})`,
      );
    }
    list.push(decodeInstance(row.info_json, { type: row.type, name: row.name, allocId: row.alloc_id }));
  }
  return { plugins };
}

interface EncodedState {
  types: string[];
  names: Array<[string, string]>;
  instances: InstanceRow[];
}

/** Encodes and re-checks every instance first, so the store never holds what it could not read back. */
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
      list.forEach((info: PluginInstanceInfo, position) => {
        if (typeof info !== 'object' || info === null || typeof info.allocId !== 'string') {
          throw new BerthError(
            'BERTH_INVALID_ARGUMENT',
            `cannot store registry state: instance ${position} of plugin ${name} (type ${type}) has no allocId`,
          );
        }
        const json = encodeInstance(info);
        const key = { type, name, allocId: info.allocId };
        try {
          decodeInstance(json, key);
        } catch (err) {
          throw new BerthError('BERTH_INVALID_ARGUMENT', `cannot store registry state: ${errorMessage(err)}`);
        }
        encoded.instances.push({ type, name, position, alloc_id: info.allocId, info_json: json });
      });
    }
  }
  return encoded;
}

function own<T>(record: Record<string, T>, key: string): T | undefined {
  return Object.hasOwn(record, key) ? record[key] : undefined;
}

const SQLITE_HEADER = Buffer.from('SQLite format 3\0', 'latin1');

/** Throws CorruptStateError for a non-empty file that does not start like a SQLite database. */
function checkHeader(path: string): void {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch {
    return; // Missing (created next) or unopenable (SQLite reports it properly).
  }
  try {
    const head = Buffer.alloc(SQLITE_HEADER.length);
    const read = readSync(fd, head, 0, head.length, 0);
    if (read > 0 && !head.subarray(0, read).equals(SQLITE_HEADER.subarray(0, read))) {
      throw new CorruptStateError('file is not a database (no SQLite header)');
    }
    if (read > 0 && read < SQLITE_HEADER.length) {
      throw new CorruptStateError('file is not a database (truncated header)');
    }
  } finally {
    closeSync(fd);
  }
}

function isCorruption(err: unknown): boolean {
  if (err instanceof CorruptStateError) return true;
  const code = err instanceof Error ? (err as { code?: unknown }).code : undefined;
  return typeof code === 'string' && (code === 'SQLITE_NOTADB' || code.startsWith('SQLITE_CORRUPT'));
}

function failure(message: string, cause: unknown): BerthError {
  if (isBerthError(cause)) return cause;
  return new BerthError('BERTH_STORAGE_FAILED', `${message}: ${errorMessage(cause)}`, { cause });
}

function asidePath(path: string, at: number): string {
  const stamp = new Date(at).toISOString().replace(/[:.]/g, '-');
  let candidate = `${path}.corrupt-${stamp}`;
  for (let n = 1; existsSync(candidate); n++) candidate = `${path}.corrupt-${stamp}-${n}`;
  return candidate;
}
