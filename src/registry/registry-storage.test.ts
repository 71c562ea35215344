/**
 * The registry's write path against real SQLite: only changed rows are
 * written (counted by SQLite triggers, independently of berth's own stats),
 * changes made together share one transaction, a huge plugin costs only its
 * own row, and a deregistration whose write fails is hidden and retried.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import Database from 'better-sqlite3';
import type { PluginEvent } from '../common/index.js';
import { createSqliteStorage, type SqliteStorage } from '../storage/index.js';
import { instrumented } from '../testing/harness/index.js';
import { createTempDir, FakeClock, nodePlugin, waitFor } from '../testing/index.js';
import { createRegistry, REGISTRY_DEFAULTS } from './index.js';

async function started(path: string): Promise<SqliteStorage> {
  const storage = createSqliteStorage({ path });
  await storage.start();
  return storage;
}

/** Installs triggers that log every row written to the registry tables, with the bytes of instance rows. */
function installWriteLog(path: string): void {
  const db = new Database(path);
  db.exec(`
    CREATE TABLE write_log (tbl TEXT NOT NULL, op TEXT NOT NULL, bytes INTEGER NOT NULL);
    CREATE TRIGGER log_i_ins AFTER INSERT ON plugin_instances
      BEGIN INSERT INTO write_log VALUES ('instances', 'insert', length(NEW.info_json)); END;
    CREATE TRIGGER log_i_upd AFTER UPDATE ON plugin_instances
      BEGIN INSERT INTO write_log VALUES ('instances', 'update', length(NEW.info_json)); END;
    CREATE TRIGGER log_i_del AFTER DELETE ON plugin_instances
      BEGIN INSERT INTO write_log VALUES ('instances', 'delete', 0); END;
    CREATE TRIGGER log_n_ins AFTER INSERT ON plugin_names
      BEGIN INSERT INTO write_log VALUES ('names', 'insert', 0); END;
    CREATE TRIGGER log_n_del AFTER DELETE ON plugin_names
      BEGIN INSERT INTO write_log VALUES ('names', 'delete', 0); END;
    CREATE TRIGGER log_t_ins AFTER INSERT ON plugin_types
      BEGIN INSERT INTO write_log VALUES ('types', 'insert', 0); END;
  `);
  db.close();
}

/** The rows written since the last call, as "table op" strings, and the instance bytes. */
function writeLogReader(path: string) {
  const db = new Database(path, { readonly: true });
  let seen = 0;
  return {
    next(): { rows: string[]; bytes: number } {
      const entries = db
        .prepare('SELECT rowid, tbl, op, bytes FROM write_log WHERE rowid > ? ORDER BY rowid')
        .all(seen) as Array<{ rowid: number; tbl: string; op: string; bytes: number }>;
      seen = entries.at(-1)?.rowid ?? seen;
      return {
        rows: entries.map((e) => `${e.tbl} ${e.op}`),
        bytes: entries.reduce((n, e) => n + e.bytes, 0),
      };
    },
    close: () => db.close(),
  };
}

describe('registry on SQLite: incremental, group-committed writes', () => {
  it('writes only the rows a change touches, however many instances are registered', async (t) => {
    const dir = createTempDir();
    t.after(() => dir.remove());
    const path = dir.join('state.db');
    await (await started(path)).stop(); // creates the schema
    installWriteLog(path);
    const storage = await started(path);
    t.after(() => storage.stop());
    const registry = createRegistry({ storage });
    await registry.start();
    const log = writeLogReader(path);
    t.after(() => log.close());

    await Promise.all(
      Array.from({ length: 1000 }, (_, n) =>
        registry.registerPlugin(nodePlugin(n, { name: `resident-${n}` })),
      ),
    );
    const filled = log.next().rows;
    assert.equal(filled.filter((r) => r === 'instances insert').length, 1000);
    assert.equal(filled.filter((r) => r === 'types insert').length, 1);

    await registry.registerPlugin(nodePlugin(5000, { name: 'resident-7' }));
    assert.deepEqual(log.next().rows, ['instances insert'], 'a second instance of a known name: one row');
    await registry.registerPlugin(nodePlugin(5001, { name: 'newcomer' }));
    assert.deepEqual(
      log.next().rows,
      ['names insert', 'instances insert'],
      'a new name: its name row and its row',
    );
    await registry.registerPlugin(nodePlugin(5001, { name: 'newcomer', version: 'v2' }));
    assert.deepEqual(log.next().rows, ['instances update'], 'a changed definition: its row, in place');
    await registry.registerPlugin(nodePlugin(5001, { name: 'newcomer', version: 'v2' }));
    assert.deepEqual(log.next().rows, [], 'an unchanged re-register writes nothing');
    await registry.deregisterPlugin('csi-node', 'resident-7', 'alloc-5000');
    assert.deepEqual(log.next().rows, ['instances delete'], 'removing one of two instances: its row');
    await registry.deregisterPlugin('csi-node', 'newcomer', 'alloc-5001');
    assert.deepEqual(
      log.next().rows,
      ['instances delete', 'names delete'],
      'removing the last instance of a name',
    );
    await registry.deregisterPlugin('csi-node', 'newcomer', 'alloc-5001');
    assert.deepEqual(log.next().rows, [], 'deregistering what is gone writes nothing');

    const db = new Database(path, { readonly: true });
    assert.equal(db.prepare('SELECT count(*) FROM plugin_instances').pluck().get(), 1000);
    db.close();
    await registry.stop();
  });

  it('changes made together share one transaction, and all of them are durable', async (t) => {
    const dir = createTempDir();
    t.after(() => dir.remove());
    const path = dir.join('state.db');
    const storage = await started(path);
    const registry = createRegistry({ storage });
    await registry.start();
    const before = storage.writeStats;
    await Promise.all(
      Array.from({ length: 300 }, (_, n) => registry.registerPlugin(nodePlugin(n, { name: `p-${n % 7}` }))),
    );
    const after = storage.writeStats;
    // At most maxBatch changes per transaction: 300 made together take ceil(300 / 128) = 3.
    assert.equal(REGISTRY_DEFAULTS.maxBatch, 128);
    assert.equal(after.transactions - before.transactions, 3, 'three transactions for 300 registrations');
    assert.equal(after.changes - before.changes, 300);
    // Deregistrations and registrations mixed in one batch, in order.
    await Promise.all([
      registry.deregisterPlugin('csi-node', 'p-0', 'alloc-0'),
      registry.registerPlugin(nodePlugin(1000, { name: 'p-0' })),
      registry.deregisterPlugin('csi-node', 'p-0', 'alloc-1000'),
    ]);
    assert.equal(storage.writeStats.transactions - after.transactions, 1);
    await registry.stop();
    await storage.stop();
    const reopened = await started(path);
    t.after(() => reopened.stop());
    const restored = createRegistry({ storage: reopened });
    assert.equal(
      restored
        .types()
        .flatMap((type) =>
          (restored.listPlugins(type) ?? []).flatMap((p) => restored.listInstances(type, p.name)),
        ).length,
      299,
    );
    assert.deepEqual(
      restored
        .listInstances('csi-node', 'p-0')
        .map((i) => i.allocId)
        .slice(0, 2),
      ['alloc-294', 'alloc-287'],
      'newest first, alloc-0 and alloc-1000 gone',
    );
  });

  it('a plugin with a 3 MB name costs only its own row: later registrations write small rows', async (t) => {
    const dir = createTempDir();
    t.after(() => dir.remove());
    const path = dir.join('state.db');
    await (await started(path)).stop();
    installWriteLog(path);
    const storage = await started(path);
    t.after(() => storage.stop());
    const registry = createRegistry({ storage });
    await registry.start();
    const log = writeLogReader(path);
    t.after(() => log.close());
    const huge = 'h'.repeat(3 * 1024 * 1024);
    await registry.registerPlugin(nodePlugin(0, { name: huge }));
    assert.ok(log.next().bytes > 3 * 1024 * 1024, 'the huge row itself was written');
    for (let n = 1; n <= 20; n++) {
      await registry.registerPlugin(nodePlugin(n, { name: `small-${n}` }));
      const { rows, bytes } = log.next();
      assert.deepEqual(rows, ['names insert', 'instances insert']);
      assert.ok(bytes < 1000, `registration ${n} wrote ${bytes} bytes of instance rows`);
    }
    assert.equal(registry.listPlugins('csi-node')?.length, 21);
    await registry.stop();
  });

  it('a deregistration whose write fails is hidden and announced at once, and its delete is retried until it lands', async (t) => {
    const dir = createTempDir();
    t.after(() => dir.remove());
    const path = dir.join('state.db');
    const clock = new FakeClock(1000);
    const storage = instrumented(await started(path));
    const tapped: PluginEvent[] = [];
    const registry = createRegistry({
      storage,
      clock,
      onEvent: (e) => tapped.push(e),
      storageRetry: { initialMs: 100, maxMs: 400, factor: 2 },
    });
    await registry.start();
    await registry.registerPlugin(nodePlugin(0));
    await registry.registerPlugin(nodePlugin(1));
    storage.failWrites = 'no space left on device';
    await registry.deregisterPlugin('csi-node', 'my-plugin', 'alloc-1');
    assert.deepEqual(
      registry.listInstances('csi-node', 'my-plugin').map((i) => i.allocId),
      ['alloc-0'],
      'hidden at once: no ghost',
    );
    assert.deepEqual(
      tapped.map((e) => e.type),
      ['registered', 'registered', 'storage-error', 'deregistered'],
    );
    const failing = registry.storageHealth();
    assert.equal(failing.state, 'failing');
    assert.equal(failing.state === 'failing' ? failing.pendingDeletes : -1, 1);
    // A registration in the meantime is refused, and changes nothing.
    await assert.rejects(registry.registerPlugin(nodePlugin(2)), { code: 'BERTH_STORAGE_FAILED' });
    assert.deepEqual(
      registry.listInstances('csi-node', 'my-plugin').map((i) => i.allocId),
      ['alloc-0'],
    );
    // Retries keep failing while the disk is full; the backoff grows to its cap.
    await clock.advance(100);
    await waitFor('retry 1', () => registry.storageHealth().failures === 3);
    await clock.advance(400);
    await waitFor('retry 2', () => registry.storageHealth().failures === 4);
    storage.failWrites = undefined;
    await clock.advance(400);
    await waitFor('the delete landed', () => registry.storageHealth().state === 'ok');
    assert.deepEqual(storage.written.at(-1), {
      op: 'delete',
      type: 'csi-node',
      name: 'my-plugin',
      allocId: 'alloc-1',
    });
    await registry.stop();
    await storage.stop();
    const reopened = await started(path);
    t.after(() => reopened.stop());
    assert.deepEqual(
      createRegistry({ storage: reopened })
        .listInstances('csi-node', 'my-plugin')
        .map((i) => i.allocId),
      ['alloc-0'],
      'the deregistration is durable',
    );
  });
});
