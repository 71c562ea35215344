import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import Database from 'better-sqlite3';
import type { PluginInstanceInfo } from '../common/index.js';
import { createRecordingLogger, createTempDir, FakeClock, type LogRecord } from '../testing/index.js';
import { openSqliteStorage, type RegistryState, type StorageCorruptionReport } from './index.js';

function instance(n: number, name = 'my-plugin'): PluginInstanceInfo {
  return {
    type: 'csi-node',
    name,
    version: `v${n}`,
    connectionInfo: { socketPath: `/var/data/alloc/alloc-${n}/csi.sock` },
    allocId: `alloc-${n}`,
    options: { n: String(n) },
    registeredAt: 1000 + n,
  };
}

const sampleState: RegistryState = {
  plugins: { 'csi-node': { 'my-plugin': [instance(2), instance(1), instance(0)] } },
};

/** A storage that records corruption reports and logs, on a fake clock. */
function openObserved(path: string) {
  const reports: StorageCorruptionReport[] = [];
  const logs: LogRecord[] = [];
  const clock = new FakeClock(Date.UTC(2026, 0, 2, 3, 4, 5, 6));
  const storage = openSqliteStorage({
    path,
    clock,
    logger: createRecordingLogger(logs),
    onCorrupt: (r) => reports.push(r),
  });
  return { storage, reports, logs };
}

/** Writes a database the way the storage does, then lets the test damage it with raw SQL. */
function seedThenDamage(path: string, damage: (db: Database.Database) => void): void {
  const storage = openSqliteStorage({ path });
  storage.putDynamicPluginRegistryState(sampleState);
  storage.close();
  const db = new Database(path);
  damage(db);
  db.close();
}

function assertSetAsideAndFresh(
  observed: ReturnType<typeof openObserved>,
  path: string,
  expectedStamp = '2026-01-02T03-04-05-006Z',
): StorageCorruptionReport {
  const { storage, reports, logs } = observed;
  assert.equal(reports.length, 1, 'one corruption report');
  const report = reports[0];
  assert.ok(report !== undefined);
  assert.equal(report.path, path);
  assert.equal(report.movedTo, `${path}.corrupt-${expectedStamp}`);
  assert.equal(report.error.code, 'BERTH_STORAGE_CORRUPT');
  assert.match(report.error.message, /moved to/);
  assert.ok(existsSync(report.movedTo), 'the bad file is kept for inspection');
  assert.equal(storage.corruption, report);
  assert.ok(
    logs.some((l) => l.level === 'error' && (l.fields as { code?: string }).code === 'BERTH_STORAGE_CORRUPT'),
    'logged at error level with the code',
  );
  // The reader of the state learns it was lost, once; then the fresh database works.
  assert.throws(() => storage.getDynamicPluginRegistryState(), { code: 'BERTH_STORAGE_CORRUPT' });
  assert.equal(storage.getDynamicPluginRegistryState(), undefined);
  storage.putDynamicPluginRegistryState(sampleState);
  assert.deepEqual(storage.getDynamicPluginRegistryState(), sampleState);
  return report;
}

describe('SQLite storage', () => {
  it('creates its directory and a database at the current schema version', () => {
    {
      const dir = createTempDir();
      try {
        const path = dir.join('nested', 'deeper', 'state.db');
        const storage = openSqliteStorage({ path });
        assert.equal(storage.schemaVersion, 2);
        assert.equal(storage.path, path);
        assert.equal(storage.corruption, undefined);
        storage.close();
        const db = new Database(path, { readonly: true });
        assert.equal(db.pragma('journal_mode', { simple: true }), 'wal');
        assert.equal(db.prepare("SELECT value FROM meta WHERE key = 'schema_version'").pluck().get(), '2');
        db.close();
      } finally {
        dir.remove();
      }
    }
  });

  it('stores one row per instance with its position, newest first', () => {
    const dir = createTempDir();
    try {
      const path = dir.join('state.db');
      const storage = openSqliteStorage({ path });
      storage.putDynamicPluginRegistryState(sampleState);
      storage.close();
      const db = new Database(path, { readonly: true });
      const rows = db
        .prepare('SELECT name, position, alloc_id FROM plugin_instances ORDER BY position')
        .all() as Array<{ name: string; position: number; alloc_id: string }>;
      db.close();
      assert.deepEqual(rows, [
        { name: 'my-plugin', position: 0, alloc_id: 'alloc-2' },
        { name: 'my-plugin', position: 1, alloc_id: 'alloc-1' },
        { name: 'my-plugin', position: 2, alloc_id: 'alloc-0' },
      ]);
    } finally {
      dir.remove();
    }
  });

  it('migrates a version 1 database, keeping its instances in order and backfilling names', () => {
    const dir = createTempDir();
    try {
      const path = dir.join('state.db');
      // A database as version 1 of the schema wrote it.
      const v1 = new Database(path);
      v1.pragma('journal_mode = WAL');
      v1.exec(`
        CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) STRICT;
        CREATE TABLE plugin_types (type TEXT PRIMARY KEY) STRICT;
        CREATE TABLE plugin_instances (
          type TEXT NOT NULL, name TEXT NOT NULL, position INTEGER NOT NULL,
          alloc_id TEXT NOT NULL, info_json TEXT NOT NULL, PRIMARY KEY (type, name, position)
        ) STRICT;
        INSERT INTO meta VALUES ('schema_version', '1'), ('registry_state_written', '1');
        INSERT INTO plugin_types VALUES ('csi-node'), ('csi-controller');
      `);
      const insert = v1.prepare('INSERT INTO plugin_instances VALUES (?, ?, ?, ?, ?)');
      ['alloc-2', 'alloc-1', 'alloc-0'].forEach((allocId, position) => {
        const n = Number(allocId.slice(-1));
        insert.run('csi-node', 'my-plugin', position, allocId, JSON.stringify(instance(n)));
      });
      v1.close();

      const storage = openSqliteStorage({ path });
      assert.equal(storage.schemaVersion, 2);
      assert.deepEqual(storage.getDynamicPluginRegistryState(), {
        plugins: {
          'csi-controller': {},
          'csi-node': { 'my-plugin': [instance(2), instance(1), instance(0)] },
        },
      });
      // Version 2's reason to exist: a name whose instances are all gone survives a reopen.
      storage.putDynamicPluginRegistryState({ plugins: { 'csi-node': { 'my-plugin': [] } } });
      storage.close();
      const reopened = openSqliteStorage({ path });
      assert.deepEqual(reopened.getDynamicPluginRegistryState(), {
        plugins: { 'csi-node': { 'my-plugin': [] } },
      });
      reopened.close();

      const db = new Database(path, { readonly: true });
      assert.equal(db.prepare("SELECT value FROM meta WHERE key = 'schema_version'").pluck().get(), '2');
      db.close();
    } finally {
      dir.remove();
    }
  });

  it('refuses a database from a newer berth and leaves it untouched', () => {
    const dir = createTempDir();
    try {
      const path = dir.join('state.db');
      seedThenDamage(path, (db) =>
        db.prepare("UPDATE meta SET value = '3' WHERE key = 'schema_version'").run(),
      );
      const before = readFileSync(path);
      const reports: StorageCorruptionReport[] = [];
      assert.throws(
        () => openSqliteStorage({ path, onCorrupt: (r) => reports.push(r) }),
        (err: unknown) => {
          assert.equal((err as { code?: string }).code, 'BERTH_STORAGE_VERSION');
          assert.match((err as Error).message, /schema version 3, newer than version 2/);
          return true;
        },
      );
      assert.deepEqual(readFileSync(path), before, 'the file is byte-for-byte unchanged');
      assert.deepEqual(reports, []);
      assert.deepEqual(
        readdirSync(dir.path).filter((f) => f.includes('corrupt')),
        [],
        'nothing was moved aside',
      );
    } finally {
      dir.remove();
    }
  });

  it('moves a file that is not a database aside (with its -wal and -shm) and starts empty', () => {
    const dir = createTempDir();
    try {
      const path = dir.join('state.db');
      const garbage = Buffer.from('definitely not SQLite '.repeat(200));
      writeFileSync(path, garbage);
      writeFileSync(`${path}-wal`, 'stray wal');
      writeFileSync(`${path}-shm`, 'stray shm');
      const observed = openObserved(path);
      try {
        const report = assertSetAsideAndFresh(observed, path);
        assert.deepEqual(readFileSync(report.movedTo), garbage);
        assert.equal(readFileSync(`${report.movedTo}-wal`, 'utf8'), 'stray wal');
        assert.equal(readFileSync(`${report.movedTo}-shm`, 'utf8'), 'stray shm');
        assert.match(report.error.message, /not a database/);
      } finally {
        observed.storage.close();
      }
      // Restarting on the fresh database finds what was stored after the reset, and no new corruption.
      const again = openSqliteStorage({ path });
      assert.equal(again.corruption, undefined);
      assert.deepEqual(again.getDynamicPluginRegistryState(), sampleState);
      again.close();
    } finally {
      dir.remove();
    }
  });

  it('moves a database with damaged pages aside', () => {
    const dir = createTempDir();
    try {
      const path = dir.join('state.db');
      const big: RegistryState = { plugins: { 'csi-node': {} } };
      const byName = big.plugins['csi-node'] ?? {};
      for (let n = 0; n < 400; n++) byName[`plugin-${n}`] = [instance(n, `plugin-${n}`)];
      const storage = openSqliteStorage({ path });
      storage.putDynamicPluginRegistryState(big);
      storage.close();
      const bytes = readFileSync(path);
      assert.ok(bytes.length > 4096 * 8, 'several pages to damage');
      bytes.fill(0x5a, 4096 * 2, 4096 * 6);
      writeFileSync(path, bytes);
      const observed = openObserved(path);
      try {
        assertSetAsideAndFresh(observed, path);
      } finally {
        observed.storage.close();
      }
    } finally {
      dir.remove();
    }
  });

  const badRows: Array<[string, string]> = [
    ['JSON that does not parse', "UPDATE plugin_instances SET info_json = '{not json' WHERE position = 1"],
    [
      'JSON of the wrong shape',
      `UPDATE plugin_instances SET info_json = '{"type":"csi-node"}' WHERE position = 0`,
    ],
    [
      'a row that disagrees with its key',
      "UPDATE plugin_instances SET alloc_id = 'someone-else' WHERE position = 2",
    ],
    ['a gap in the positions', 'DELETE FROM plugin_instances WHERE position = 1'],
    ['an instance of an unknown name', 'DELETE FROM plugin_names'],
    ['a broken schema marker', "UPDATE meta SET value = 'two' WHERE key = 'schema_version'"],
  ];
  for (const [what, sql] of badRows) {
    it(`moves a database with ${what} aside and starts empty`, () => {
      const dir = createTempDir();
      try {
        const path = dir.join('state.db');
        seedThenDamage(path, (db) => db.exec(sql));
        const observed = openObserved(path);
        try {
          const report = assertSetAsideAndFresh(observed, path);
          // The damaged database is preserved as it was.
          const kept = new Database(report.movedTo, { readonly: true });
          assert.ok(Number(kept.prepare('SELECT count(*) FROM plugin_types').pluck().get()) >= 1);
          kept.close();
        } finally {
          observed.storage.close();
        }
      } finally {
        dir.remove();
      }
    });
  }

  it('damage that appears after opening is caught by the next read and set aside the same way', () => {
    const dir = createTempDir();
    try {
      const path = dir.join('state.db');
      const observed = openObserved(path);
      try {
        observed.storage.putDynamicPluginRegistryState(sampleState);
        assert.equal(observed.reports.length, 0);
        const other = new Database(path);
        other.exec("UPDATE plugin_instances SET info_json = '[]' WHERE position = 0");
        other.close();
        assert.throws(() => observed.storage.getDynamicPluginRegistryState(), {
          code: 'BERTH_STORAGE_CORRUPT',
          message: /stored value is not an object/,
        });
        assert.equal(observed.reports.length, 1);
        assert.ok(existsSync(observed.reports[0]?.movedTo ?? ''));
        assert.equal(observed.storage.getDynamicPluginRegistryState(), undefined, 'carries on, empty');
        observed.storage.putDynamicPluginRegistryState({ plugins: {} });
        assert.deepEqual(observed.storage.getDynamicPluginRegistryState(), { plugins: {} });
      } finally {
        observed.storage.close();
      }
    } finally {
      dir.remove();
    }
  });

  it('picks a new name when a set-aside file with the same timestamp exists', () => {
    const dir = createTempDir();
    try {
      const path = dir.join('state.db');
      writeFileSync(`${path}.corrupt-2026-01-02T03-04-05-006Z`, 'earlier');
      writeFileSync(path, 'garbage garbage garbage garbage garbage garbage garbage garbage garbage garbage');
      const observed = openObserved(path);
      try {
        assertSetAsideAndFresh(observed, path, '2026-01-02T03-04-05-006Z-1');
        assert.equal(readFileSync(`${path}.corrupt-2026-01-02T03-04-05-006Z`, 'utf8'), 'earlier');
      } finally {
        observed.storage.close();
      }
    } finally {
      dir.remove();
    }
  });

  it('fails with BERTH_STORAGE_FAILED, and moves nothing, when the path cannot be opened', () => {
    const dir = createTempDir();
    try {
      const path = dir.join('state.db');
      mkdirSync(path);
      assert.throws(() => openSqliteStorage({ path }), { code: 'BERTH_STORAGE_FAILED' });
      assert.deepEqual(readdirSync(dir.path), ['state.db']);
    } finally {
      dir.remove();
    }
  });

  it('rejects a state it could not read back, keeping what was stored', () => {
    const dir = createTempDir();
    try {
      const storage = openSqliteStorage({ path: dir.join('state.db') });
      storage.putDynamicPluginRegistryState(sampleState);
      const mismatched: RegistryState = {
        plugins: { 'csi-node': { 'my-plugin': [instance(5, 'not-my-plugin')] } },
      };
      assert.throws(() => storage.putDynamicPluginRegistryState(mismatched), {
        code: 'BERTH_INVALID_ARGUMENT',
        message: /does not match its row/,
      });
      const noOptions = {
        plugins: { 'csi-node': { 'my-plugin': [{ ...instance(5), options: { n: 5 } }] } },
      } as unknown as RegistryState;
      assert.throws(() => storage.putDynamicPluginRegistryState(noOptions), {
        code: 'BERTH_INVALID_ARGUMENT',
      });
      assert.deepEqual(storage.getDynamicPluginRegistryState(), sampleState);
      storage.close();
    } finally {
      dir.remove();
    }
  });
});
