import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * A fresh temporary directory per test, removed on dispose. Unix socket paths
 * are limited to ~107 bytes, so the prefix is kept short and under /tmp.
 */
export interface TempDir extends AsyncDisposable {
  readonly path: string;
  join(...parts: string[]): string;
  remove(): void;
}

export function createTempDir(prefix = 'berth-'): TempDir {
  const base = process.platform === 'linux' ? '/tmp' : tmpdir();
  const path = mkdtempSync(join(base, prefix));
  const remove = () => rmSync(path, { recursive: true, force: true });
  return {
    path,
    join: (...parts) => join(path, ...parts),
    remove,
    [Symbol.asyncDispose]: async () => remove(),
  };
}
