import { isAscii } from 'node:buffer';
import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { basename, dirname, join } from 'node:path';
import { cachedDataVersionTag } from 'node:v8';
import { Script } from 'node:vm';
import {
  CODE_CACHE_MAGIC,
  CODE_CACHE_SUFFIX,
  SCRIPT_WRAPPER_START,
  scriptWrapper,
} from './code-cache-options.js';

/**
 * Runs a CommonJS bundle with a V8 code cache, the start-up cost node 20
 * leaves to its users (22 has module.enableCompileCache): compiling the
 * daemon's ~4.5 MB of JavaScript was a quarter of `berth run`'s start; with
 * the cache V8 deserializes the compiled functions instead, including the
 * ones the last start compiled lazily, since the cache is made after a start.
 *
 * A cache file is the magic line, V8's version tag (its version, flags and
 * CPU features: V8 rejects a cache made under other ones), the payload's
 * SHA-1, and the payload. V8 checks a cache's header but not its payload, so
 * the SHA-1 is what keeps a damaged file from being deserialized. Any cache
 * that is missing, damaged, made by another V8 or rejected is skipped and
 * the bundle compiles from source; nothing about a cache can fail the start.
 */
export interface CachedScriptOptions {
  /** The CommonJS bundle (absolute path). */
  file: string;
  /** Where its cache may be (code-cache-options.ts): read in order, written to the first that can be. */
  cacheFiles: readonly string[];
  /** Parameters passed to the module wrapper after CommonJS's five, by name. */
  params?: Readonly<Record<string, unknown>>;
}

export interface CachedScript<T> {
  exports: T;
  /** The cache file V8 accepted, if any. */
  cacheUsed: string | undefined;
  /** Why each cache file that exists was not used. */
  cacheProblems: string[];
  /**
   * Writes a cache of everything compiled so far (call it once the program
   * has done what it starts for), atomically, to the first cache file that
   * can be written, and removes that directory's caches of other builds.
   * Does nothing when a cache was used. Never throws: says where it wrote,
   * or why it could not.
   */
  saveCache(): { written?: string; problems: string[] };
}

export function runCachedScript<T>(options: CachedScriptOptions): CachedScript<T> {
  const names = Object.keys(options.params ?? {});
  const source = readSource(options.file);
  // The same wrapper as node's CommonJS loader, so the bundle sees the usual five names. A
  // file the build wrote already wrapped (the daemon bundle) is compiled as it is.
  const { head, tail } = scriptWrapper(names);
  const wrapped = source.startsWith(SCRIPT_WRAPPER_START);
  if (wrapped && !(source.startsWith(head) && source.endsWith(tail))) {
    // Wrapped again, its code would never run.
    throw new Error(
      `${options.file} was built wrapped for other parameters than ${names.join(', ') || 'none'}`,
    );
  }
  const wrapper = wrapped ? source : `${head}${source}${tail}`;
  const tag = versionLine();
  const cacheProblems: string[] = [];
  const found = findCache(options.cacheFiles, tag, cacheProblems);
  const script = new Script(wrapper, {
    filename: options.file,
    ...(found === undefined ? {} : { cachedData: found.payload }),
  });
  let cacheUsed: string | undefined;
  if (found !== undefined) {
    if (script.cachedDataRejected === true) cacheProblems.push(`${found.file}: rejected by V8`);
    else cacheUsed = found.file;
  }
  const module = { exports: {} as T };
  const run = script.runInThisContext() as (...args: unknown[]) => void;
  run(
    module.exports,
    createRequire(options.file),
    module,
    options.file,
    dirname(options.file),
    ...names.map((n) => options.params?.[n]),
  );
  let saved = false;
  return {
    exports: module.exports,
    cacheUsed,
    cacheProblems,
    saveCache() {
      if (cacheUsed !== undefined || saved) return { problems: [] };
      saved = true;
      return writeCache(options.cacheFiles, tag, script.createCachedData());
    },
  };
}

/** esbuild writes ASCII (the build checks), which reads fastest as a one-byte string. */
function readSource(file: string): string {
  const bytes = readFileSync(file);
  return bytes.toString(isAscii(bytes) ? 'latin1' : 'utf8');
}

function versionLine(): string {
  return `${process.versions.v8} ${process.arch} ${cachedDataVersionTag()}\n`;
}

function sha1(bytes: Uint8Array): string {
  return createHash('sha1').update(bytes).digest('hex');
}

/** The first cache file made by this V8 whose payload is intact. */
function findCache(
  files: readonly string[],
  tag: string,
  problems: string[],
): { file: string; payload: Buffer } | undefined {
  const head = Buffer.from(CODE_CACHE_MAGIC + tag);
  for (const file of files) {
    let bytes: Buffer;
    try {
      bytes = readFileSync(file);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code !== 'ENOENT' && code !== 'ENOTDIR') problems.push(`${file}: cannot be read (${code ?? err})`);
      continue;
    }
    if (!bytes.subarray(0, CODE_CACHE_MAGIC.length).equals(head.subarray(0, CODE_CACHE_MAGIC.length))) {
      problems.push(`${file}: not a berth code cache`);
      continue;
    }
    if (!bytes.subarray(0, head.length).equals(head)) {
      problems.push(`${file}: made by another node or V8 flags`);
      continue;
    }
    const digestEnd = head.length + 41; // 40 hex digits and a newline
    const payload = bytes.subarray(digestEnd);
    if (bytes.toString('latin1', head.length, digestEnd) !== `${sha1(payload)}\n`) {
      problems.push(`${file}: damaged (checksum mismatch)`);
      continue;
    }
    return { file, payload };
  }
  return undefined;
}

function writeCache(
  files: readonly string[],
  tag: string,
  payload: Buffer,
): { written?: string; problems: string[] } {
  const problems: string[] = [];
  const bytes = Buffer.concat([Buffer.from(`${CODE_CACHE_MAGIC}${tag}${sha1(payload)}\n`), payload]);
  for (const file of files) {
    // A temporary name then a rename: a reader sees the old file or the whole new one.
    const temp = `${file}.${process.pid}.tmp`;
    try {
      mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
      writeFileSync(temp, bytes, { mode: 0o644 });
      renameSync(temp, file);
    } catch (err) {
      removeQuietly(temp);
      problems.push(`${file}: cannot be written (${(err as NodeJS.ErrnoException).code ?? err})`);
      continue;
    }
    removeOtherBuilds(file);
    return { written: file, problems };
  }
  return { problems };
}

function removeQuietly(file: string): void {
  try {
    rmSync(file, { force: true });
  } catch {
    // Its directory cannot be reached either (the reason the write failed).
  }
}

/** daemon-<hash>.cjs.v8cache: the caches of the same bundle's other builds in this directory. */
function removeOtherBuilds(file: string): void {
  const name = basename(file);
  const stem = name.slice(0, name.lastIndexOf('-') + 1);
  if (stem === '') return;
  try {
    for (const other of readdirSync(dirname(file))) {
      if (other !== name && other.startsWith(stem) && other.endsWith(CODE_CACHE_SUFFIX)) {
        rmSync(join(dirname(file), other), { force: true });
      }
    }
  } catch {
    // Best effort: a stale cache only takes room.
  }
}
