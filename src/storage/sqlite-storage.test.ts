import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import Database from 'better-sqlite3';
import type { PluginInstanceInfo } from '../common/index.js';
import { createRecordingLogger, type LogRecord } from '../testing/harness/index.js';
import { createTempDir, FakeClock } from '../testing/index.js';
import {
  createSqliteStorage,
  type RegistryState,
  type SqliteStorage,
  type SqliteStorageOptions,
  type StorageCorruptionReport,
} from './index.js';

/** Creates and starts a SQLite storage (start is where it opens the file). */
async function openSqliteStorage(options: SqliteStorageOptions): Promise<SqliteStorage> {
  const storage = createSqliteStorage(options);
  await storage.start();
  return storage;
}

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
async function openObserved(path: string) {
  const reports: StorageCorruptionReport[] = [];
  const logs: LogRecord[] = [];
  const clock = new FakeClock(Date.UTC(2026, 0, 2, 3, 4, 5, 6));
  const storage = await openSqliteStorage({
    path,
    clock,
    logger: createRecordingLogger(logs),
    onCorrupt: (r) => reports.push(r),
  });
  return { storage, reports, logs };
}

/** Writes a database the way the storage does, then lets the test damage it with raw SQL. */
async function seedThenDamage(path: string, damage: (db: Database.Database) => void): Promise<void> {
  const storage = await openSqliteStorage({ path });
  storage.putDynamicPluginRegistryState(sampleState);
  await storage.stop();
  const db = new Database(path);
  damage(db);
  db.close();
}

function assertSetAsideAndFresh(
  observed: Awaited<ReturnType<typeof openObserved>>,
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
  it('creates its directory and a database at the current schema version', async () => {
    {
      const dir = createTempDir();
      try {
        const path = dir.join('nested', 'deeper', 'state.db');
        const storage = await openSqliteStorage({ path });
        assert.equal(storage.schemaVersion, 3);
        assert.equal(storage.path, path);
        assert.equal(storage.corruption, undefined);
        await storage.stop();
        const db = new Database(path, { readonly: true });
        assert.equal(db.pragma('journal_mode', { simple: true }), 'wal');
        assert.equal(db.prepare("SELECT value FROM meta WHERE key = 'schema_version'").pluck().get(), '3');
        db.close();
      } finally {
        dir.remove();
      }
    }
  });

  it('stores one row per instance with its order key, newest highest', async () => {
    const dir = createTempDir();
    try {
      const path = dir.join('state.db');
      const storage = await openSqliteStorage({ path });
      storage.putDynamicPluginRegistryState(sampleState);
      await storage.stop();
      const db = new Database(path, { readonly: true });
      const rows = db
        .prepare('SELECT name, seq, alloc_id FROM plugin_instances ORDER BY seq DESC')
        .all() as Array<{ name: string; seq: number; alloc_id: string }>;
      db.close();
      assert.deepEqual(rows, [
        { name: 'my-plugin', seq: 3, alloc_id: 'alloc-2' },
        { name: 'my-plugin', seq: 2, alloc_id: 'alloc-1' },
        { name: 'my-plugin', seq: 1, alloc_id: 'alloc-0' },
      ]);
    } finally {
      dir.remove();
    }
  });

  it('migrates a version 1 database, keeping its instances in order and backfilling names', async () => {
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

      const storage = await openSqliteStorage({ path });
      assert.equal(storage.schemaVersion, 3);
      assert.deepEqual(storage.getDynamicPluginRegistryState(), {
        plugins: {
          'csi-controller': {},
          'csi-node': { 'my-plugin': [instance(2), instance(1), instance(0)] },
        },
      });
      // Version 2's reason to exist: a name whose instances are all gone survives a reopen.
      storage.putDynamicPluginRegistryState({ plugins: { 'csi-node': { 'my-plugin': [] } } });
      await storage.stop();
      const reopened = await openSqliteStorage({ path });
      assert.deepEqual(reopened.getDynamicPluginRegistryState(), {
        plugins: { 'csi-node': { 'my-plugin': [] } },
      });
      await reopened.stop();

      const db = new Database(path, { readonly: true });
      assert.equal(db.prepare("SELECT value FROM meta WHERE key = 'schema_version'").pluck().get(), '3');
      db.close();
    } finally {
      dir.remove();
    }
  });

  it('migrates a version 2 database (dense positions) to one row per instance, keeping the order', async () => {
    const dir = createTempDir();
    try {
      const path = dir.join('state.db');
      // A database as version 2 of the schema wrote it (the whole-registry rewrite layout).
      const v2 = new Database(path);
      v2.pragma('journal_mode = WAL');
      v2.exec(`
        CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) STRICT;
        CREATE TABLE plugin_types (type TEXT PRIMARY KEY) STRICT;
        CREATE TABLE plugin_instances (
          type TEXT NOT NULL, name TEXT NOT NULL, position INTEGER NOT NULL,
          alloc_id TEXT NOT NULL, info_json TEXT NOT NULL, PRIMARY KEY (type, name, position)
        ) STRICT;
        CREATE TABLE plugin_names (type TEXT NOT NULL, name TEXT NOT NULL, PRIMARY KEY (type, name)) STRICT;
        INSERT INTO meta VALUES ('schema_version', '2'), ('registry_state_written', '1');
        INSERT INTO plugin_types VALUES ('csi-node'), ('csi-controller');
        INSERT INTO plugin_names VALUES ('csi-node', 'my-plugin'), ('csi-node', 'other'), ('csi-node', 'emptied');
      `);
      const insert = v2.prepare('INSERT INTO plugin_instances VALUES (?, ?, ?, ?, ?)');
      ['alloc-2', 'alloc-1', 'alloc-0'].forEach((allocId, position) => {
        const n = Number(allocId.slice(-1));
        insert.run('csi-node', 'my-plugin', position, allocId, JSON.stringify(instance(n)));
      });
      insert.run('csi-node', 'other', 0, 'alloc-7', JSON.stringify(instance(7, 'other')));
      v2.close();

      const storage = await openSqliteStorage({ path });
      assert.equal(storage.schemaVersion, 3);
      const expected: RegistryState = {
        plugins: {
          'csi-controller': {},
          'csi-node': {
            emptied: [],
            'my-plugin': [instance(2), instance(1), instance(0)],
            other: [instance(7, 'other')],
          },
        },
      };
      assert.deepEqual(storage.getDynamicPluginRegistryState(), expected);
      // The incremental path continues the converted order: a new instance goes in front.
      await storage.applyChanges([{ op: 'put', info: instance(3), front: true }]);
      await storage.stop();
      const reopened = await openSqliteStorage({ path });
      assert.deepEqual(
        reopened.getDynamicPluginRegistryState()?.plugins['csi-node']?.['my-plugin']?.map((i) => i.allocId),
        ['alloc-3', 'alloc-2', 'alloc-1', 'alloc-0'],
      );
      await reopened.stop();
      const db = new Database(path, { readonly: true });
      const columns = (
        db.prepare('PRAGMA table_info(plugin_instances)').all() as Array<{ name: string }>
      ).map((c) => c.name);
      assert.deepEqual(columns, ['type', 'name', 'alloc_id', 'seq', 'info_json']);
      db.close();
    } finally {
      dir.remove();
    }
  });

  it('refuses a database from a newer berth and leaves it untouched', async () => {
    const dir = createTempDir();
    try {
      const path = dir.join('state.db');
      await seedThenDamage(path, (db) =>
        db.prepare("UPDATE meta SET value = '4' WHERE key = 'schema_version'").run(),
      );
      const before = readFileSync(path);
      const reports: StorageCorruptionReport[] = [];
      await assert.rejects(openSqliteStorage({ path, onCorrupt: (r) => reports.push(r) }), (err: unknown) => {
        assert.equal((err as { code?: string }).code, 'BERTH_STORAGE_VERSION');
        assert.match((err as Error).message, /schema version 4, newer than version 3/);
        return true;
      });
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

  it('moves a file that is not a database aside (with its -wal and -shm) and starts empty', async () => {
    const dir = createTempDir();
    try {
      const path = dir.join('state.db');
      const garbage = Buffer.from('definitely not SQLite '.repeat(200));
      writeFileSync(path, garbage);
      writeFileSync(`${path}-wal`, 'stray wal');
      writeFileSync(`${path}-shm`, 'stray shm');
      const observed = await openObserved(path);
      try {
        const report = assertSetAsideAndFresh(observed, path);
        assert.deepEqual(readFileSync(report.movedTo), garbage);
        assert.equal(readFileSync(`${report.movedTo}-wal`, 'utf8'), 'stray wal');
        assert.equal(readFileSync(`${report.movedTo}-shm`, 'utf8'), 'stray shm');
        assert.match(report.error.message, /not a database/);
      } finally {
        await observed.storage.stop();
      }
      // Restarting on the fresh database finds what was stored after the reset, and no new corruption.
      const again = await openSqliteStorage({ path });
      assert.equal(again.corruption, undefined);
      assert.deepEqual(again.getDynamicPluginRegistryState(), sampleState);
      await again.stop();
    } finally {
      dir.remove();
    }
  });

  it('moves a database with damaged pages aside', async () => {
    const dir = createTempDir();
    try {
      const path = dir.join('state.db');
      const big: RegistryState = { plugins: { 'csi-node': {} } };
      const byName = big.plugins['csi-node'] ?? {};
      for (let n = 0; n < 400; n++) byName[`plugin-${n}`] = [instance(n, `plugin-${n}`)];
      const storage = await openSqliteStorage({ path });
      storage.putDynamicPluginRegistryState(big);
      await storage.stop();
      const bytes = readFileSync(path);
      assert.ok(bytes.length > 4096 * 8, 'several pages to damage');
      bytes.fill(0x5a, 4096 * 2, 4096 * 6);
      writeFileSync(path, bytes);
      const observed = await openObserved(path);
      try {
        assertSetAsideAndFresh(observed, path);
      } finally {
        await observed.storage.stop();
      }
    } finally {
      dir.remove();
    }
  });

  const badRows: Array<[string, string]> = [
    [
      'JSON that does not parse',
      "UPDATE plugin_instances SET info_json = '{not json' WHERE alloc_id = 'alloc-1'",
    ],
    [
      'JSON of the wrong shape',
      `UPDATE plugin_instances SET info_json = '{"type":"csi-node"}' WHERE alloc_id = 'alloc-2'`,
    ],
    [
      'a row that disagrees with its key',
      "UPDATE plugin_instances SET alloc_id = 'someone-else' WHERE alloc_id = 'alloc-0'",
    ],
    ['two instances sharing one order key', 'UPDATE plugin_instances SET seq = 7'],
    ['an instance of an unknown name', 'DELETE FROM plugin_names'],
    ['a broken schema marker', "UPDATE meta SET value = 'two' WHERE key = 'schema_version'"],
  ];
  for (const [what, sql] of badRows) {
    it(`moves a database with ${what} aside and starts empty`, async () => {
      const dir = createTempDir();
      try {
        const path = dir.join('state.db');
        await seedThenDamage(path, (db) => db.exec(sql));
        const observed = await openObserved(path);
        try {
          const report = assertSetAsideAndFresh(observed, path);
          // The damaged database is preserved as it was.
          const kept = new Database(report.movedTo, { readonly: true });
          assert.ok(Number(kept.prepare('SELECT count(*) FROM plugin_types').pluck().get()) >= 1);
          kept.close();
        } finally {
          await observed.storage.stop();
        }
      } finally {
        dir.remove();
      }
    });
  }

  it('damage that appears after opening is caught by the next read and set aside the same way', async () => {
    const dir = createTempDir();
    try {
      const path = dir.join('state.db');
      const observed = await openObserved(path);
      try {
        observed.storage.putDynamicPluginRegistryState(sampleState);
        assert.equal(observed.reports.length, 0);
        const other = new Database(path);
        other.exec("UPDATE plugin_instances SET info_json = '[]' WHERE alloc_id = 'alloc-2'");
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
        await observed.storage.stop();
      }
    } finally {
      dir.remove();
    }
  });

  it('picks a new name when a set-aside file with the same timestamp exists', async () => {
    const dir = createTempDir();
    try {
      const path = dir.join('state.db');
      writeFileSync(`${path}.corrupt-2026-01-02T03-04-05-006Z`, 'earlier');
      writeFileSync(path, 'garbage garbage garbage garbage garbage garbage garbage garbage garbage garbage');
      const observed = await openObserved(path);
      try {
        assertSetAsideAndFresh(observed, path, '2026-01-02T03-04-05-006Z-1');
        assert.equal(readFileSync(`${path}.corrupt-2026-01-02T03-04-05-006Z`, 'utf8'), 'earlier');
      } finally {
        await observed.storage.stop();
      }
    } finally {
      dir.remove();
    }
  });

  it('fails with BERTH_STORAGE_FAILED, and moves nothing, when the path cannot be opened', async () => {
    const dir = createTempDir();
    try {
      const path = dir.join('state.db');
      mkdirSync(path);
      await assert.rejects(openSqliteStorage({ path }), { code: 'BERTH_STORAGE_FAILED' });
      assert.deepEqual(readdirSync(dir.path), ['state.db']);
    } finally {
      dir.remove();
    }
  });

  it('rejects a state it could not read back, keeping what was stored', async () => {
    const dir = createTempDir();
    try {
      const storage = await openSqliteStorage({ path: dir.join('state.db') });
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
      await storage.stop();
    } finally {
      dir.remove();
    }
  });
});
