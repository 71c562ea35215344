/**
 * The writer thread ends after a pause with nothing to write, and the next
 * batch starts another one on the same file: nothing is lost either way.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { createTempDir, nodePlugin, type TempDir, waitFor } from '../testing/index.js';
import { createSqliteStorage } from './index.js';
import { SqliteWriter } from './sqlite-writer.js';

/** A state database with berth's schema (made by the storage), for the writer under test to write to. */
async function schemaFile(dir: TempDir): Promise<string> {
  const path = dir.join('state.db');
  const storage = createSqliteStorage({ path, writerIdleStopMs: false });
  await storage.start();
  await storage.stop();
  return path;
}

describe('SQLite writer thread, idle', () => {
  it('ends after writerIdleStopMs with nothing to write, and the next batch starts another', async (t) => {
    const dir = createTempDir();
    t.after(() => dir.remove());
    const path = await schemaFile(dir);

    const writer = new SqliteWriter({ path, busyTimeoutMs: 5000 }, 100);
    t.after(() => writer.stop());
    await writer.start();
    assert.ok((await writer.apply([{ op: 'put', info: nodePlugin(1), front: true }])) > 0);
    assert.equal(writer.threadRunning, true);
    await waitFor('the idle thread ends', () => !writer.threadRunning);

    assert.ok((await writer.apply([{ op: 'put', info: nodePlugin(2), front: true }])) > 0);
    assert.equal(writer.threadRunning, true, 'a batch after the pause started a thread');
    await waitFor('the second thread ends too', () => !writer.threadRunning);

    const db = new Database(path, { readonly: true });
    try {
      const rows = db.prepare('SELECT alloc_id FROM plugin_instances ORDER BY seq').pluck().all();
      assert.deepEqual(rows, ['alloc-1', 'alloc-2']);
    } finally {
      db.close();
    }
  });

  it('keeps a thread that is never idle that long', async (t) => {
    const dir = createTempDir();
    t.after(() => dir.remove());
    const path = await schemaFile(dir);
    const writer = new SqliteWriter({ path, busyTimeoutMs: 5000 }, 60_000);
    t.after(() => writer.stop());
    await writer.start();
    for (let n = 1; n <= 5; n++) await writer.apply([{ op: 'put', info: nodePlugin(n), front: true }]);
    assert.equal(writer.threadRunning, true);
  });

  it('refuses a writerIdleStopMs that is not a positive number or false', () => {
    const dir = createTempDir();
    try {
      for (const bad of [0, -1, Number.NaN, Number.POSITIVE_INFINITY]) {
        assert.throws(
          () => createSqliteStorage({ path: dir.join('state.db'), writerIdleStopMs: bad }),
          (err: unknown) =>
            (err as { code?: string }).code === 'BERTH_INVALID_ARGUMENT' &&
            /writerIdleStopMs must be a positive number of milliseconds or false/.test(String(err)),
          String(bad),
        );
      }
    } finally {
      dir.remove();
    }
  });
});

describe('SQLite storage, writer thread idle', () => {
  it('writes the first batch after an idle stop on the main connection and starts a thread for the next, losing nothing', async (t) => {
    const dir = createTempDir();
    t.after(() => dir.remove());
    const path = dir.join('state.db');
    const storage = createSqliteStorage({ path, writerIdleStopMs: 100 });
    await storage.start();
    await storage.applyChanges([{ op: 'put', info: nodePlugin(1), front: true }]);
    await waitFor('the idle thread ends', () => !storage.writerRunning);

    assert.equal(storage.writeStats.inlineTransactions, 0, 'written by the thread while it ran');
    await storage.applyChanges([{ op: 'put', info: nodePlugin(2), front: true }]);
    assert.equal(storage.writeStats.inlineTransactions, 1, 'written here: no thread was running');
    assert.equal(storage.writerRunning, true, 'that write started a thread for the next ones');
    await storage.applyChanges([{ op: 'put', info: nodePlugin(3), front: true }]);
    assert.equal(storage.writeStats.inlineTransactions, 1, 'the next one went to the new thread');
    assert.equal(storage.writeStats.transactions, 3);
    await storage.stop();

    const again = createSqliteStorage({ path, writerIdleStopMs: false });
    await again.start();
    t.after(() => again.stop());
    const state = again.getDynamicPluginRegistryState();
    assert.deepEqual(
      state?.plugins['csi-node']?.['my-plugin']?.map((i) => i.allocId),
      ['alloc-3', 'alloc-2', 'alloc-1'],
    );
  });
});

describe("SQLite storage, writerStart: 'first-write'", () => {
  it('starts no thread at start; the first batch is written here and starts one; nothing is lost', async (t) => {
    const dir = createTempDir();
    t.after(() => dir.remove());
    const path = dir.join('state.db');
    const storage = createSqliteStorage({ path, writerStart: 'first-write', writerIdleStopMs: false });
    await storage.start();
    assert.equal(storage.writerRunning, false, 'no thread before a write');
    await storage.applyChanges([{ op: 'put', info: nodePlugin(1), front: true }]);
    assert.equal(storage.writeStats.inlineTransactions, 1, 'the first batch went on the main connection');
    assert.equal(storage.writerRunning, true, 'and started the thread');
    await storage.applyChanges([{ op: 'put', info: nodePlugin(2), front: true }]);
    assert.equal(storage.writeStats.inlineTransactions, 1, 'the next batch went to the thread');
    await storage.stop();

    const again = createSqliteStorage({ path });
    await again.start();
    t.after(() => again.stop());
    assert.deepEqual(
      again.getDynamicPluginRegistryState()?.plugins['csi-node']?.['my-plugin']?.map((i) => i.allocId),
      ['alloc-2', 'alloc-1'],
    );
  });

  it('refuses a writerStart it does not know', () => {
    const dir = createTempDir();
    try {
      assert.throws(
        () => createSqliteStorage({ path: dir.join('state.db'), writerStart: 'later' as 'start' }),
        (err: unknown) =>
          (err as { code?: string }).code === 'BERTH_INVALID_ARGUMENT' &&
          /writerStart must be 'start' or 'first-write', got "later"/.test(String(err)),
      );
    } finally {
      dir.remove();
    }
  });
});
