import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { createTempDir } from '../testing/index.js';
import { runCachedScript } from './code-cache.js';
import { CODE_CACHE_MAGIC, codeCacheFiles, scriptWrapper } from './code-cache-options.js';

/** A CommonJS bundle with enough functions for V8 to cache, using a wrapper parameter. */
const BUNDLE = `'use strict';
const parts = [];
for (let i = 0; i < 50; i++) parts.push(function part() { return i * 2; });
exports.sum = () => parts.reduce((total, part) => total + part(), 0);
exports.greeting = __greet('cache');
exports.filename = __filename;
// A non-ASCII comment: the file is then read as UTF-8 — é
`;

function writeBundle(dir: string, name = 'daemon-AAAA1111.cjs'): string {
  const file = join(dir, name);
  writeFileSync(file, BUNDLE);
  return file;
}

interface Exports {
  sum(): number;
  greeting: string;
  filename: string;
}

function load(file: string, cacheFiles: string[]) {
  return runCachedScript<Exports>({
    file,
    cacheFiles,
    params: { __greet: (what: string) => `hello ${what}` },
  });
}

/** Where the payload starts: after the magic, the version line and the digest line. */
function payloadOffset(bytes: Buffer): number {
  let newlines = 0;
  for (let i = 0; i < bytes.length; i++) if (bytes[i] === 0x0a && ++newlines === 3) return i + 1;
  throw new Error('no header');
}

describe('code cache for a CommonJS bundle (code-cache.ts)', () => {
  it('runs without a cache, writes one after, and the next run uses it', async () => {
    await using dir = createTempDir('berth-cc-');
    const file = writeBundle(dir.path);
    const cache = dir.join('cache', 'daemon-AAAA1111.cjs.v8cache');

    const first = load(file, [cache]);
    assert.equal(first.exports.sum(), 2450);
    assert.equal(first.exports.greeting, 'hello cache');
    assert.equal(first.exports.filename, file);
    assert.equal(first.cacheUsed, undefined);
    assert.deepEqual(first.cacheProblems, []);
    assert.deepEqual(first.saveCache(), { written: cache, problems: [] });
    assert.ok(readFileSync(cache).subarray(0, CODE_CACHE_MAGIC.length).equals(Buffer.from(CODE_CACHE_MAGIC)));

    const second = load(file, [cache]);
    assert.equal(second.cacheUsed, cache);
    assert.deepEqual(second.cacheProblems, []);
    assert.equal(second.exports.sum(), 2450);
    // A used cache is not written again.
    assert.deepEqual(second.saveCache(), { problems: [] });
  });

  it('a bundle the build wrote already wrapped runs as it is, with and without its cache; one wrapped for other names fails clearly', async () => {
    await using dir = createTempDir('berth-cc-');
    const { head, tail } = scriptWrapper(['__greet']);
    const file = dir.join('daemon-WRAPPED1.cjs');
    writeFileSync(file, `${head}${BUNDLE}${tail}`);
    const cache = dir.join('daemon-WRAPPED1.cjs.v8cache');

    const first = load(file, [cache]);
    assert.equal(first.exports.sum(), 2450);
    assert.equal(first.exports.greeting, 'hello cache');
    assert.equal(first.saveCache().written, cache);
    const second = load(file, [cache]);
    assert.equal(second.cacheUsed, cache);
    assert.equal(second.exports.sum(), 2450);

    // Wrapped again, its code would never run: the loader says so instead of returning no exports.
    const other = dir.join('daemon-WRAPPED2.cjs');
    writeFileSync(other, `${scriptWrapper(['__other']).head}${BUNDLE}${tail}`);
    assert.throws(
      () => load(other, []),
      /daemon-WRAPPED2\.cjs was built wrapped for other parameters than __greet/,
    );
  });

  it('a damaged payload is skipped (never given to V8), the bundle still runs, and a good cache replaces it', async () => {
    await using dir = createTempDir('berth-cc-');
    const file = writeBundle(dir.path);
    const cache = dir.join('daemon-AAAA1111.cjs.v8cache');
    load(file, [cache]).saveCache();
    const bytes = readFileSync(cache);
    const at = payloadOffset(bytes) + Math.floor((bytes.length - payloadOffset(bytes)) / 2);
    bytes[at] = (bytes[at] as number) ^ 0xff;
    writeFileSync(cache, bytes);

    const damaged = load(file, [cache]);
    assert.equal(damaged.cacheUsed, undefined);
    assert.deepEqual(damaged.cacheProblems, [`${cache}: damaged (checksum mismatch)`]);
    assert.equal(damaged.exports.sum(), 2450);
    assert.equal(damaged.saveCache().written, cache);
    assert.equal(load(file, [cache]).cacheUsed, cache);
  });

  it('a truncated file, a file that is no cache, and a cache of another V8 are each skipped with the reason', async () => {
    await using dir = createTempDir('berth-cc-');
    const file = writeBundle(dir.path);
    const good = dir.join('good.v8cache');
    load(file, [good]).saveCache();
    const bytes = readFileSync(good);

    const truncated = dir.join('truncated.v8cache');
    writeFileSync(truncated, bytes.subarray(0, bytes.length - 100));
    const garbage = dir.join('garbage.v8cache');
    writeFileSync(garbage, 'not a cache at all');
    const empty = dir.join('empty.v8cache');
    writeFileSync(empty, '');
    const otherV8 = dir.join('other.v8cache');
    const text = bytes.toString('latin1');
    writeFileSync(otherV8, Buffer.from(text.replace(`${process.versions.v8} `, '0.0.0.0 '), 'latin1'));
    const directory = dir.join('a-directory.v8cache');
    mkdirSync(directory);

    const run = load(file, [
      truncated,
      garbage,
      empty,
      otherV8,
      directory,
      dir.join('missing.v8cache'),
      good,
    ]);
    assert.equal(run.cacheUsed, good);
    assert.deepEqual(run.cacheProblems, [
      `${truncated}: damaged (checksum mismatch)`,
      `${garbage}: not a berth code cache`,
      `${empty}: not a berth code cache`,
      `${otherV8}: made by another node or V8 flags`,
      `${directory}: cannot be read (EISDIR)`,
    ]);
    assert.equal(run.exports.sum(), 2450);
  });

  it('writes to the first place that can be written; when none can, says why and does not throw', async () => {
    await using dir = createTempDir('berth-cc-');
    const file = writeBundle(dir.path);
    // A regular file where a directory should be: unwritable even for root.
    writeFileSync(dir.join('blocker'), '');
    const blocked = dir.join('blocker', 'sub', 'daemon-AAAA1111.cjs.v8cache');
    const fallback = dir.join('fallback', 'daemon-AAAA1111.cjs.v8cache');

    const saved = load(file, [blocked, fallback]).saveCache();
    assert.equal(saved.written, fallback);
    assert.equal(saved.problems.length, 1);
    assert.match(
      saved.problems[0] ?? '',
      /blocker\/sub\/daemon-AAAA1111\.cjs\.v8cache: cannot be written \(ENOTDIR\)/,
    );
    assert.equal(load(file, [blocked, fallback]).cacheUsed, fallback);

    const nowhere = load(file, [blocked]).saveCache();
    assert.equal(nowhere.written, undefined);
    assert.equal(nowhere.problems.length, 1);
    assert.ok(!existsSync(`${blocked}.${process.pid}.tmp`));
  });

  it("writing a cache removes that directory's caches of the bundle's other builds, and nothing else", async () => {
    await using dir = createTempDir('berth-cc-');
    const file = writeBundle(dir.path, 'daemon-NEWHASH1.cjs');
    writeFileSync(dir.join('daemon-OLDHASH1.cjs.v8cache'), 'old');
    writeFileSync(dir.join('other-OLDHASH1.cjs.v8cache'), 'another bundle');
    writeFileSync(dir.join('daemon-notes.txt'), 'not a cache');

    load(file, [dir.join('daemon-NEWHASH1.cjs.v8cache')]).saveCache();
    assert.ok(!existsSync(dir.join('daemon-OLDHASH1.cjs.v8cache')));
    assert.ok(existsSync(dir.join('daemon-NEWHASH1.cjs.v8cache')));
    assert.ok(existsSync(dir.join('other-OLDHASH1.cjs.v8cache')));
    assert.ok(existsSync(dir.join('daemon-notes.txt')));
  });

  it('cache places: $BERTH_CODE_CACHE_DIR alone, else beside the bundle then the per-user cache directory', async () => {
    const bundle = '/opt/berth/dist/bundle/daemon-AAAA1111.cjs';
    assert.deepEqual(codeCacheFiles(bundle, { BERTH_CODE_CACHE_DIR: '/tmp/cc' }), [
      '/tmp/cc/daemon-AAAA1111.cjs.v8cache',
    ]);
    assert.deepEqual(codeCacheFiles(bundle, { XDG_CACHE_HOME: '/home/u/.cache' }), [
      '/opt/berth/dist/bundle/daemon-AAAA1111.cjs.v8cache',
      '/home/u/.cache/berth/daemon-AAAA1111.cjs.v8cache',
    ]);
  });
});
