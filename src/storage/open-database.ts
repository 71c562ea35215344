import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import type BetterSqlite3 from 'better-sqlite3';
import Database from 'better-sqlite3';

/**
 * better-sqlite3's compiled addon for `new Database(..., { nativeBinding })`:
 * its path where its own build puts it; else the addon found by its own
 * search (the `bindings` package, a dozen candidate paths) rooted at its
 * package, which run from inside the daemon bundle would look under berth's
 * instead; else undefined, and better-sqlite3 searches and fails as it would
 * have. Given the path, it loads the addon directly: its search took 1-2 ms
 * of every daemon start, and the daemon bundle can carry better-sqlite3's
 * JavaScript (scripts/bundle.mjs).
 */
let addon: string | object | null | undefined;
export function sqliteNativeBinding(): string | object | undefined {
  if (addon === undefined) {
    const require = createRequire(import.meta.url);
    try {
      addon = require.resolve('better-sqlite3/build/Release/better_sqlite3.node');
    } catch {
      try {
        const pkg = require.resolve('better-sqlite3/package.json');
        const bindings = createRequire(pkg)('bindings') as (opts: object) => object;
        addon = bindings({ bindings: 'better_sqlite3.node', module_root: dirname(pkg) });
      } catch {
        addon = null;
      }
    }
  }
  return addon ?? undefined;
}

/** `new Database(...)`, with the addon when it is known. */
export function openDatabase(
  file: string | Buffer,
  options: BetterSqlite3.Options = {},
): BetterSqlite3.Database {
  const nativeBinding = sqliteNativeBinding();
  if (nativeBinding === undefined) return new Database(file, options);
  // Its types say a path; its code (lib/database.js) also takes the loaded addon, as the fallback gives.
  return new Database(file, { ...options, nativeBinding } as BetterSqlite3.Options);
}
