import assert from 'node:assert/strict';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { createRecordingLogger } from '../../testing/harness/index.js';
import { createTempDir, FakeClock, nextWithin, type TempDir, waitFor } from '../../testing/index.js';
import type { KubeObject, ObjectResource } from '../source.js';
import { createDirectorySource, type DirectorySourceOptions } from './directory-source.js';

function write(
  dir: TempDir,
  resource: ObjectResource | 'widgets',
  ns: string,
  file: string,
  content: string | object,
) {
  mkdirSync(dir.join(resource, ns), { recursive: true });
  const path = dir.join(resource, ns, file);
  // Objects written as values get the kind their directory needs unless a test sets one.
  const kind = resource === 'secrets' ? 'Secret' : 'ConfigMap';
  writeFileSync(path, typeof content === 'string' ? content : JSON.stringify({ kind, ...content }));
  return path;
}

function open(dir: TempDir, extra: Partial<DirectorySourceOptions> = {}) {
  const logger = createRecordingLogger();
  const source = createDirectorySource({ root: dir.path, logger, ...extra });
  // Only the warnings matter here: a malformed file is reported, never fatal.
  return { source, warnings: logger.records };
}

async function names(source: ReturnType<typeof open>['source'], resource: ObjectResource, ns: string) {
  return (await source.list(resource, ns)).items.map((o) => o.metadata.name).sort();
}

describe('directory source', () => {
  test('files become objects: identity from the path, apiVersion filled in, JSON and YAML', async (t) => {
    await using dir = createTempDir('berth-dirsrc-');
    write(dir, 'secrets', 'ns', 'plain.json', { data: { k: 'dg==' } });
    write(
      dir,
      'secrets',
      'ns',
      'yaml.yaml',
      'kind: Secret\nmetadata:\n  name: yaml\nstringData:\n  password: hunter2\n',
    );
    write(dir, 'configmaps', 'ns', 'settings.yml', 'kind: ConfigMap\ndata:\n  mode: fast\nimmutable: true\n');
    write(dir, 'secrets', 'ns', '.hidden.json', { data: {} });
    write(dir, 'secrets', 'ns', 'notes.txt', 'not an object');
    write(dir, 'widgets', 'ns', 'w.json', { data: {} });
    const { source, warnings } = open(dir);
    t.after(() => source.stop());

    assert.deepEqual(await names(source, 'secrets', 'ns'), ['plain', 'yaml']);
    const plain = await source.get('secrets', 'ns', 'plain');
    assert.equal(plain.kind, 'Secret');
    assert.equal(plain.apiVersion, 'v1');
    assert.deepEqual(plain.metadata.namespace, 'ns');
    assert.match(plain.metadata.resourceVersion ?? '', /^\d+$/);
    const yaml = await source.get('secrets', 'ns', 'yaml');
    assert.deepEqual(yaml.data, { password: Buffer.from('hunter2').toString('base64') });
    assert.equal(yaml.stringData, undefined);
    const settings = await source.get('configmaps', 'ns', 'settings');
    assert.deepEqual(
      { kind: settings.kind, data: settings.data, immutable: settings.immutable },
      {
        kind: 'ConfigMap',
        data: { mode: 'fast' },
        immutable: true,
      },
    );
    await assert.rejects(source.get('secrets', 'other', 'plain'), /secret "plain" not found/);
    assert.deepEqual(
      warnings.filter((w) => w.level === 'warn'),
      [],
    );
  });

  test('creating, editing and deleting files are ADDED, MODIFIED and DELETED watch events', async (t) => {
    await using dir = createTempDir('berth-dirsrc-');
    const { source } = open(dir);
    t.after(() => source.stop());
    const list = await source.list('secrets', 'ns', { name: 'a' });
    assert.deepEqual(list.items, []);
    const controller = new AbortController();
    t.after(() => controller.abort());
    const events = source
      .watch('secrets', 'ns', { name: 'a', resourceVersion: list.resourceVersion, signal: controller.signal })
      [Symbol.asyncIterator]();

    const path = write(dir, 'secrets', 'ns', 'a.json', { data: { v: 'MQ==' } });
    const added = await nextWithin(events, 'ADDED', 20_000);
    assert.equal(added.type, 'ADDED');
    const addedObject = (added as { object: KubeObject }).object;
    assert.deepEqual(addedObject.data, { v: 'MQ==' });

    write(dir, 'secrets', 'ns', 'a.json', { data: { v: 'Mg==' } });
    const modified = await nextWithin(events, 'MODIFIED', 20_000);
    assert.equal(modified.type, 'MODIFIED');
    const modifiedObject = (modified as { object: KubeObject }).object;
    assert.deepEqual(modifiedObject.data, { v: 'Mg==' });
    assert.ok(Number(modifiedObject.metadata.resourceVersion) > Number(addedObject.metadata.resourceVersion));

    rmSync(path);
    const deleted = await nextWithin(events, 'DELETED', 20_000);
    assert.equal(deleted.type, 'DELETED');
    await assert.rejects(source.get('secrets', 'ns', 'a'), /not found/);
  });

  test('a malformed file is reported and skipped while the others are served', async (t) => {
    await using dir = createTempDir('berth-dirsrc-');
    write(dir, 'secrets', 'ns', 'good.json', { data: { v: 'MQ==' } });
    const broken = write(dir, 'secrets', 'ns', 'broken.json', '{ "data": ');
    const badYaml = write(dir, 'configmaps', 'ns', 'bad.yaml', 'data: [unclosed\n');
    const { source, warnings } = open(dir);
    t.after(() => source.stop());

    assert.deepEqual(await names(source, 'secrets', 'ns'), ['good']);
    assert.deepEqual(await names(source, 'configmaps', 'ns'), []);
    const warned = (path: string) => warnings.find((w) => w.level === 'warn' && w.fields.path === path);
    assert.match(String(warned(broken)?.fields.err), /cannot parse/);
    assert.match(String(warned(badYaml)?.fields.err), /cannot parse/);
    assert.deepEqual(
      source.problems().map((p) => p.path),
      [badYaml, broken].sort(),
    );

    // Fixing the file brings the object in; the problem goes away.
    write(dir, 'secrets', 'ns', 'broken.json', { data: { v: 'Mg==' } });
    await waitFor('fixed file served', async () => (await names(source, 'secrets', 'ns')).length === 2, {
      timeoutMs: 20_000,
    });
    assert.deepEqual(
      source.problems().map((p) => p.path),
      [badYaml],
    );

    // Breaking a good file keeps its last good object (a half-written edit must not delete it).
    write(dir, 'secrets', 'ns', 'good.json', 'garbage');
    await waitFor(
      'warned about good.json',
      () => warnings.some((w) => w.level === 'warn' && String(w.fields.path).endsWith('good.json')),
      {
        timeoutMs: 20_000,
      },
    );
    assert.deepEqual((await source.get('secrets', 'ns', 'good')).data, { v: 'MQ==' });
  });

  test('metadata or kind contradicting the path is reported and skipped', async (t) => {
    await using dir = createTempDir('berth-dirsrc-');
    const wrongName = write(dir, 'secrets', 'ns', 'a.json', { metadata: { name: 'b' } });
    const wrongNs = write(dir, 'secrets', 'ns', 'c.json', { metadata: { namespace: 'elsewhere' } });
    const wrongKind = write(dir, 'secrets', 'ns', 'd.json', { kind: 'ConfigMap' });
    const notObject = write(dir, 'secrets', 'ns', 'e.json', '[1, 2]');
    const badData = write(dir, 'secrets', 'ns', 'f.json', { data: { k: 1 } });
    const empty = write(dir, 'secrets', 'ns', 'g.yaml', '');
    write(dir, 'secrets', 'ns', 'ok.json', { metadata: { name: 'ok', namespace: 'ns' }, kind: 'Secret' });
    const { source } = open(dir);
    t.after(() => source.stop());
    assert.deepEqual(await names(source, 'secrets', 'ns'), ['ok']);
    const problems = new Map(source.problems().map((p) => [p.path, p.message]));
    assert.match(problems.get(wrongName) ?? '', /metadata\.name "b" does not match the file name "a"/);
    assert.match(
      problems.get(wrongNs) ?? '',
      /metadata\.namespace "elsewhere" does not match the directory "ns"/,
    );
    assert.match(problems.get(wrongKind) ?? '', /kind "ConfigMap" does not belong under secrets/);
    assert.match(problems.get(notObject) ?? '', /expected an object/);
    assert.match(problems.get(badData) ?? '', /data must map keys to strings/);
    assert.match(problems.get(empty) ?? '', /empty/);
  });

  test('two files for one object: the first by name wins, the other is reported', async (t) => {
    await using dir = createTempDir('berth-dirsrc-');
    write(dir, 'secrets', 'ns', 'x.json', { data: { from: 'anNvbg==' } });
    const yamlPath = write(dir, 'secrets', 'ns', 'x.yaml', 'kind: Secret\ndata:\n  from: eWFtbA==\n');
    const { source, warnings } = open(dir);
    t.after(() => source.stop());
    assert.deepEqual((await source.get('secrets', 'ns', 'x')).data, { from: 'anNvbg==' });
    assert.ok(warnings.some((w) => w.level === 'warn' && w.fields.path === yamlPath));
    assert.deepEqual(
      source.problems().map((p) => p.path),
      [yamlPath],
    );
  });

  test('rescan() picks up changes without relying on file events; the root is created if missing', async (t) => {
    await using dir = createTempDir('berth-dirsrc-');
    const root = dir.join('not', 'yet');
    // On a fake clock the debounced event-driven scans never fire: only rescan() scans.
    const source = createDirectorySource({ root, clock: new FakeClock() });
    t.after(() => source.stop());
    await source.ready();
    mkdirSync(`${root}/secrets/ns`, { recursive: true });
    writeFileSync(`${root}/secrets/ns/a.json`, '{"kind":"Secret"}');
    await source.rescan();
    assert.deepEqual(await names(source, 'secrets', 'ns'), ['a']);
    const before = (await source.get('secrets', 'ns', 'a')).metadata.resourceVersion;
    await source.rescan(); // nothing changed: no new version
    assert.equal((await source.get('secrets', 'ns', 'a')).metadata.resourceVersion, before);
    rmSync(`${root}/secrets/ns/a.json`);
    await source.rescan();
    assert.deepEqual(await names(source, 'secrets', 'ns'), []);
    await source.stop();
    await source.stop();
  });
});
