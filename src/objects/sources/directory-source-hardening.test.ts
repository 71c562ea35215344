/**
 * The directory source against hostile or careless files: symlinks out of the
 * tree (file, namespace directory, resource directory), a 50 MB file, a
 * mapping without kind, non-base64 Secret data, and the mode of the root it
 * creates. Real files on a real file system.
 */
import assert from 'node:assert/strict';
import { mkdirSync, statSync, symlinkSync, truncateSync, writeFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { createTempDir, FakeClock } from '../../testing/index.js';
import { createDirectorySource } from './directory-source.js';

function secret(data: Record<string, string>) {
  return JSON.stringify({ kind: 'Secret', data });
}

describe('directory source hardening', () => {
  test('a symlinked file, namespace or resource directory pointing out of the tree is not served', async (t) => {
    await using dir = createTempDir('berth-dirsec-');
    const outside = dir.join('outside');
    mkdirSync(`${outside}/ns`, { recursive: true });
    writeFileSync(`${outside}/shadow.json`, secret({ root: 'c2VjcmV0' }));
    writeFileSync(`${outside}/ns/leak.json`, secret({ k: 'dg==' }));
    const root = dir.join('objects');
    mkdirSync(`${root}/secrets/ns`, { recursive: true });
    writeFileSync(`${root}/secrets/ns/real.json`, secret({ k: 'dg==' }));
    symlinkSync(`${outside}/shadow.json`, `${root}/secrets/ns/shadow.json`);
    symlinkSync(`${outside}/ns`, `${root}/secrets/linked-ns`);
    symlinkSync(outside, `${root}/configmaps`);
    const source = createDirectorySource({ root, clock: new FakeClock() });
    t.after(() => source.stop());
    await source.ready();

    assert.deepEqual(
      (await source.list('secrets', 'ns')).items.map((o) => o.metadata.name),
      ['real'],
    );
    await assert.rejects(source.get('secrets', 'ns', 'shadow'), { code: 'BERTH_OBJECT_NOT_FOUND' });
    assert.deepEqual((await source.list('secrets', 'linked-ns')).items, []);
    assert.deepEqual((await source.list('configmaps', 'ns')).items, []);
    const problem = source.problems().find((p) => p.path.endsWith('shadow.json'));
    assert.match(problem?.message ?? '', /symlink/);
  });

  test('a 50 MB file is refused by size without being read; a file within the cap is served', async (t) => {
    await using dir = createTempDir('berth-dirsec-');
    mkdirSync(dir.join('secrets', 'ns'), { recursive: true });
    const big = dir.join('secrets', 'ns', 'big.json');
    writeFileSync(big, secret({ k: 'dg==' }));
    truncateSync(big, 50 * 1024 * 1024); // sparse: costs no disk
    writeFileSync(dir.join('secrets', 'ns', 'small.json'), secret({ k: 'dg==' }));
    const rssBefore = process.memoryUsage().rss;
    const source = createDirectorySource({ root: dir.path, clock: new FakeClock() });
    t.after(() => source.stop());
    await source.ready();
    const grown = process.memoryUsage().rss - rssBefore;

    assert.deepEqual(
      (await source.list('secrets', 'ns')).items.map((o) => o.metadata.name),
      ['small'],
    );
    const problem = source.problems().find((p) => p.path === big);
    assert.match(problem?.message ?? '', /52428800 bytes, more than the limit of 1048576/);
    // Reading it would have cost at least 50 MB (more as a string); the source never reads it.
    assert.ok(grown < 40 * 1024 * 1024, `RSS grew by ${grown} bytes`);
  });

  test('kind is required and must match the directory; Secret data must be base64', async (t) => {
    await using dir = createTempDir('berth-dirsec-');
    mkdirSync(dir.join('secrets', 'ns'), { recursive: true });
    writeFileSync(dir.join('secrets', 'ns', 'nokind.yaml'), 'data:\n  k: dg==\n');
    writeFileSync(dir.join('secrets', 'ns', 'plain.json'), secret({ k: 'not base64!' }));
    writeFileSync(dir.join('secrets', 'ns', 'good.json'), secret({ k: 'aGVsbG8=' }));
    const source = createDirectorySource({ root: dir.path, clock: new FakeClock() });
    t.after(() => source.stop());
    await source.ready();

    assert.deepEqual(
      (await source.list('secrets', 'ns')).items.map((o) => o.metadata.name),
      ['good'],
    );
    const problems = new Map(source.problems().map((p) => [p.path.split('/').pop(), p.message]));
    assert.match(problems.get('nokind.yaml') ?? '', /kind is missing/);
    assert.match(problems.get('plain.json') ?? '', /data\.k is not base64/);
  });

  test('the root it creates is 0700', async (t) => {
    await using dir = createTempDir('berth-dirsec-');
    const root = dir.join('fresh', 'objects');
    const source = createDirectorySource({ root, clock: new FakeClock() });
    t.after(() => source.stop());
    await source.ready();
    assert.equal(statSync(root).mode & 0o777, 0o700);
  });
});
