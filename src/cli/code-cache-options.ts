import { homedir } from 'node:os';
import { basename, dirname, join } from 'node:path';

/**
 * Where a bundle's V8 code cache is read and written, in order: the first
 * file that holds a cache V8 accepts is used, and a new cache goes to the
 * first directory that can be written. `$BERTH_CODE_CACHE_DIR` replaces the
 * list (tests, or an install whose directories are all read-only). Beside the
 * bundle comes first: `npm run build` (and so `npm pack`) leaves a cache
 * there, and the bundle's content hash is in its name, so a cache can never
 * be paired with another build. The per-user cache directory serves an
 * install the user cannot write. A cache is code berth runs: each place must
 * be writable only by whoever may change berth itself (a created directory is
 * 0700).
 */
export function codeCacheFiles(bundleFile: string, env: NodeJS.ProcessEnv = process.env): string[] {
  const name = `${basename(bundleFile)}${CODE_CACHE_SUFFIX}`;
  if (env.BERTH_CODE_CACHE_DIR) return [join(env.BERTH_CODE_CACHE_DIR, name)];
  const userCache = env.XDG_CACHE_HOME
    ? join(env.XDG_CACHE_HOME, 'berth')
    : join(homedir(), '.cache', 'berth');
  return [join(dirname(bundleFile), name), join(userCache, name)];
}

/** A cache file's name: the bundle's name (with its content hash) and this suffix. */
export const CODE_CACHE_SUFFIX = '.v8cache';

/** The first bytes of a cache file berth wrote; followed by the payload's SHA-1 and the payload. */
export const CODE_CACHE_MAGIC = 'berth-v8-code-cache-1\n';

/**
 * The daemon bundle's code gets these names beyond CommonJS's five
 * (cli/daemon-module.ts passes them): what its `import.meta.url` and its
 * dynamic `import()` of modules outside it became (scripts/bundle.mjs).
 */
export const DAEMON_BUNDLE_PARAMS = ['__berthImportMetaUrl', '__berthImport'] as const;

/**
 * A CommonJS file as one function expression, as node's loader wraps it, with
 * `params` after the usual five. The build writes the daemon bundle already
 * wrapped so that its 4.5 MB need not be copied into a new string at every
 * start (about 2.5 ms: V8 flattens a concatenated source before compiling).
 */
export function scriptWrapper(params: readonly string[]): { head: string; tail: string } {
  return { head: `${SCRIPT_WRAPPER_START}${params.map((n) => `, ${n}`).join('')}) {`, tail: '\n})' };
}

/** How every wrapper begins: a file that begins so was written wrapped. */
export const SCRIPT_WRAPPER_START = '(function (exports, require, module, __filename, __dirname';
