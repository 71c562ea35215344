/**
 * The small durable file behind the device allocations and the CSI volume
 * state: created by its first write, refused when newer or not SQLite
 * (and left as it is), and on a real full disk (a 1 MiB tmpfs, as root, as
 * CI runs; skipped otherwise) read from an in-memory copy with writes
 * refused naming the full disk, until space returns.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { describe, it, type TestContext } from 'node:test';
import Database from 'better-sqlite3';
import { BerthError } from '../common/index.js';
import { canMountTmpfs, fillDisk, mountTmpfs, unmountTmpfs } from '../testing/harness/index.js';
import { createTempDir } from '../testing/index.js';
import { SmallSqliteFile } from './small-sqlite-file.js';

function open(path: string): SmallSqliteFile {
  return new SmallSqliteFile({
    path,
    what: 'test records',
    keep: 'it holds records in use',
    schemaVersion: 2,
    createSchema: (db) =>
      db.exec('CREATE TABLE IF NOT EXISTS records (key TEXT PRIMARY KEY, value TEXT NOT NULL)'),
  });
}

function put(file: SmallSqliteFile, key: string, value: string): void {
  file.write((db) => db.prepare('INSERT OR REPLACE INTO records VALUES (?, ?)').run(key, value));
}

function keys(file: SmallSqliteFile): string[] {
  const rows = file.db?.prepare('SELECT key FROM records ORDER BY key').all() as
    | { key: string }[]
    | undefined;
  return (rows ?? []).map((row) => row.key);
}

function storageError(err: unknown): BerthError {
  assert.ok(err instanceof BerthError, `a BerthError, not ${String(err)}`);
  return err;
}

describe('SmallSqliteFile', () => {
  it('opens nothing until the first write, which creates the file owner-only under umask 000', (t) => {
    const dir = createTempDir();
    t.after(() => dir.remove());
    const path = dir.join('state', 'records.db');
    const file = open(path);
    assert.equal(file.db, undefined);
    assert.equal(existsSync(path), false, 'no file before a write');
    const umask = process.umask(0);
    try {
      put(file, 'a', '1');
    } finally {
      process.umask(umask);
    }
    assert.equal(statSync(path).mode & 0o777, 0o600);
    file.close();
    const reopened = open(path);
    t.after(() => reopened.close());
    assert.deepEqual(keys(reopened), ['a']);
    assert.equal(reopened.db?.pragma('user_version', { simple: true }), 2);
  });

  it('refuses a file of a newer schema version with BERTH_STORAGE_VERSION, and leaves it as it was', (t) => {
    const dir = createTempDir();
    t.after(() => dir.remove());
    const path = dir.join('records.db');
    const db = new Database(path);
    db.pragma('user_version = 3');
    db.close();
    const before = readFileSync(path);
    assert.throws(
      () => open(path),
      (err) => {
        const e = storageError(err);
        assert.equal(e.code, 'BERTH_STORAGE_VERSION');
        assert.match(
          e.message,
          /test records .*records\.db: the file has schema version 3; this berth reads up to 2/,
        );
        return true;
      },
    );
    assert.deepEqual(readFileSync(path), before);
  });

  it('refuses a file that is not SQLite, naming it and saying to keep it, and moves nothing aside', (t) => {
    const dir = createTempDir();
    t.after(() => dir.remove());
    const path = dir.join('records.db');
    writeFileSync(path, 'this is not a database, but it is somebody’s file\n'.repeat(100));
    // SQLite deletes a -wal it finds beside a file it cannot read; this one stays.
    writeFileSync(`${path}-wal`, 'a stray log');
    const before = readFileSync(path);
    assert.throws(
      () => open(path),
      (err) => {
        const e = storageError(err);
        assert.equal(e.code, 'BERTH_STORAGE_FAILED');
        assert.match(
          e.message,
          /cannot open test records .*records\.db: file is not a database .*keep the file \(it holds records in use\)/,
        );
        return true;
      },
    );
    assert.deepEqual(readFileSync(path), before);
    assert.equal(readFileSync(`${path}-wal`, 'utf8'), 'a stray log');
  });

  describe('on a full disk', { skip: !canMountTmpfs() && 'needs root to mount a tmpfs' }, () => {
    function smallDisk(t: TestContext) {
      const dir = createTempDir();
      assert.ok(mountTmpfs(dir.path, '1m'), 'mount a 1 MiB tmpfs');
      t.after(() => {
        unmountTmpfs(dir.path);
        dir.remove();
      });
      return { path: dir.join('records.db'), filler: dir.join('filler') };
    }

    function assertDiskFull(err: unknown, what: RegExp): true {
      const e = storageError(err);
      assert.equal(e.code, 'BERTH_STORAGE_FAILED');
      assert.match(e.message, what);
      assert.match(e.message, /the disk is full/);
      assert.equal(e.details?.diskFull, true);
      return true;
    }

    it('reads what the file holds from a copy, refuses writes naming the full disk, and writes again once freed', (t) => {
      const { path, filler } = smallDisk(t);
      const first = open(path);
      put(first, 'a', '1');
      first.close();
      fillDisk(filler);

      const file = open(path);
      t.after(() => file.close());
      assert.ok(file.readOnly !== undefined, 'opened read-only');
      assert.match(file.readOnly.message, /cannot open test records .*: the disk is full/);
      assert.deepEqual(keys(file), ['a'], 'what the file holds is listed');
      assert.throws(
        () => put(file, 'b', '2'),
        (err) => assertDiskFull(err, /writing test records .* failed/),
      );
      assert.deepEqual(keys(file), ['a']);

      unlinkSync(filler);
      put(file, 'b', '2');
      assert.equal(file.readOnly, undefined, 'back on the file');
      file.close();
      const reopened = open(path);
      t.after(() => reopened.close());
      assert.deepEqual(keys(reopened), ['a', 'b'], 'nothing lost');
    });

    it('refuses a write that fills the disk of an open file, and takes the next one once freed', (t) => {
      const { path, filler } = smallDisk(t);
      const file = open(path);
      t.after(() => file.close());
      put(file, 'a', '1');
      fillDisk(filler);
      // A value larger than what is left (less than a page) cannot land.
      assert.throws(
        () => put(file, 'big', 'x'.repeat(64 * 1024)),
        (err) => assertDiskFull(err, /writing test records/),
      );
      unlinkSync(filler);
      put(file, 'big', 'x'.repeat(64 * 1024));
      assert.deepEqual(keys(file), ['a', 'big']);
    });

    it('fails a first write that cannot create the file, naming the full disk, and creates it once freed', (t) => {
      const { path, filler } = smallDisk(t);
      fillDisk(filler);
      const file = open(path);
      t.after(() => file.close());
      assert.throws(
        () => put(file, 'a', '1'),
        (err) => assertDiskFull(err, /(creating|writing) test records .* failed/),
      );
      unlinkSync(filler);
      put(file, 'a', '1');
      assert.deepEqual(keys(file), ['a']);
    });
  });
});
