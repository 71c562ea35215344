import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { basename } from 'node:path';
import { describe, it } from 'node:test';
import { openDatabase, sqliteNativeBinding } from './open-database.js';

describe('openDatabase (open-database.ts)', () => {
  it("finds better-sqlite3's addon where its build puts it, and opens databases with it", () => {
    const addon = sqliteNativeBinding();
    assert.ok(typeof addon === 'string', 'the addon of this checkout is not where its build puts it');
    assert.equal(basename(addon), 'better_sqlite3.node');
    assert.ok(existsSync(addon), addon);
    const db = openDatabase(':memory:');
    try {
      assert.deepEqual(db.prepare('select 40 + 2 as n').get(), { n: 42 });
    } finally {
      db.close();
    }
  });
});
