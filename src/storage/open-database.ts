import { createRequire } from 'node:module';
import type BetterSqlite3 from 'better-sqlite3';
import Database from 'better-sqlite3';

/**
 * better-sqlite3's compiled addon, where its own build puts it, or undefined
 * (another layout): then better-sqlite3 looks for it itself. Given the path,
 * it loads the addon directly, where its own search (the `bindings` package:
 * a stack trace to find the package, then a dozen candidate paths) took
 * 1-2 ms of every daemon start; and the daemon bundle can carry
 * better-sqlite3's JavaScript (scripts/bundle.mjs), which that search, run
 * from inside the bundle, could not.
 */
let addon: string | null | undefined;
export function sqliteAddonPath(): string | undefined {
  if (addon === undefined) {
    try {
      addon = createRequire(import.meta.url).resolve('better-sqlite3/build/Release/better_sqlite3.node');
    } catch {
      addon = null;
    }
  }
  return addon ?? undefined;
}

/** `new Database(...)`, with the addon's path when it is known. */
export function openDatabase(
  file: string | Buffer,
  options: BetterSqlite3.Options = {},
): BetterSqlite3.Database {
  const nativeBinding = sqliteAddonPath();
  return new Database(file, nativeBinding === undefined ? options : { ...options, nativeBinding });
}
