import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { isBerthError } from '../../common/index.js';
import { countingSource, gatedSource, nextWithin, secret } from '../../testing/index.js';
import type { WatchEvent } from '../source.js';
import { createMemorySource } from './memory-source.js';

describe('memory source', () => {
  test('put/remove assign increasing versions, keep uid across updates and give a new one on recreate', async () => {
    const source = createMemorySource();
    const a1 = source.put('secrets', secret('ns', 'a'));
    const a2 = source.put('secrets', secret('ns', 'a', { data: { k: 'v' } }));
    assert.ok(Number(a2.metadata.resourceVersion) > Number(a1.metadata.resourceVersion));
    assert.equal(a2.metadata.uid, a1.metadata.uid);
    assert.equal(source.remove('secrets', 'ns', 'a'), true);
    assert.equal(source.remove('secrets', 'ns', 'a'), false);
    const a3 = source.put('secrets', secret('ns', 'a'));
    assert.notEqual(a3.metadata.uid, a1.metadata.uid);
    assert.deepEqual((await source.get('secrets', 'ns', 'a')).metadata, a3.metadata);
    await assert.rejects(source.get('secrets', 'ns', 'b'), (err: unknown) => {
      assert.ok(isBerthError(err, 'BERTH_OBJECT_NOT_FOUND'));
      assert.equal(err.message, 'secret "b" not found');
      return true;
    });
    await assert.rejects(source.get('configmaps', 'ns', 'a'), /configmap "a" not found/);
  });

  test('returned objects are copies', async () => {
    const source = createMemorySource();
    const input = secret('ns', 'a', { data: { k: 'v' } });
    source.put('secrets', input);
    (input.data as Record<string, string>).k = 'mutated';
    const got = await source.get('secrets', 'ns', 'a');
    assert.equal(got.data?.k, 'v');
    (got.data as Record<string, string>).k = 'mutated';
    assert.equal((await source.get('secrets', 'ns', 'a')).data?.k, 'v');
  });

  test('list filters by namespace and name and reports the current version', async () => {
    const source = createMemorySource();
    source.put('secrets', secret('ns', 'a'));
    source.put('secrets', secret('ns', 'b'));
    source.put('secrets', secret('other', 'a'));
    source.put('configmaps', { metadata: { namespace: 'ns', name: 'a' } });
    const all = await source.list('secrets', 'ns');
    assert.deepEqual(all.items.map((o) => o.metadata.name).sort(), ['a', 'b']);
    assert.equal(all.resourceVersion, source.resourceVersion);
    const one = await source.list('secrets', 'ns', { name: 'a' });
    assert.deepEqual(
      one.items.map((o) => `${o.metadata.namespace}/${o.metadata.name}`),
      ['ns/a'],
    );
  });

  test('a watch replays what happened after the given version, then streams, and ends on abort', async () => {
    const source = createMemorySource();
    source.put('secrets', secret('ns', 'a'));
    const { resourceVersion } = await source.list('secrets', 'ns', { name: 'a' });
    source.put('secrets', secret('ns', 'a', { data: { v: '1' } }));
    source.put('secrets', secret('ns', 'b'));
    const controller = new AbortController();
    const it = source
      .watch('secrets', 'ns', { name: 'a', resourceVersion, signal: controller.signal })
      [Symbol.asyncIterator]();
    const first = await nextWithin(it, 'replayed MODIFIED');
    assert.equal(first.type, 'MODIFIED');
    source.remove('secrets', 'ns', 'a');
    const second = await nextWithin(it, 'DELETED');
    assert.equal(second.type, 'DELETED');
    source.bookmark();
    assert.deepEqual(await nextWithin(it, 'BOOKMARK'), {
      type: 'BOOKMARK',
      resourceVersion: source.resourceVersion,
    });
    controller.abort();
    assert.deepEqual(await it.next(), { done: true, value: undefined });
    assert.equal(source.watcherCount, 0);
  });

  test('a watch from a version older than the history is BERTH_RESOURCE_VERSION_TOO_OLD; compact() forgets all', async () => {
    const source = createMemorySource({ historyLimit: 2 });
    source.put('secrets', secret('ns', 'first'));
    const start = source.resourceVersion;
    for (let i = 0; i < 3; i++) source.put('secrets', secret('ns', `s${i}`));
    const signal = new AbortController().signal;
    const tooOld = source.watch('secrets', 'ns', { resourceVersion: start, signal })[Symbol.asyncIterator]();
    await assert.rejects(tooOld.next(), (err: unknown) =>
      isBerthError(err, 'BERTH_RESOURCE_VERSION_TOO_OLD'),
    );

    const recent = source.resourceVersion;
    source.put('secrets', secret('ns', 'x'));
    source.compact();
    const afterCompact = source
      .watch('secrets', 'ns', { resourceVersion: recent, signal })
      [Symbol.asyncIterator]();
    await assert.rejects(afterCompact.next(), (err: unknown) =>
      isBerthError(err, 'BERTH_RESOURCE_VERSION_TOO_OLD'),
    );
    // The current version is still fine.
    const controller = new AbortController();
    const current = source
      .watch('secrets', 'ns', { resourceVersion: source.resourceVersion, signal: controller.signal })
      [Symbol.asyncIterator]();
    source.put('secrets', secret('ns', 'y'));
    const event: WatchEvent = await nextWithin(current, 'ADDED y');
    assert.equal(event.type === 'ADDED' && event.object.metadata.name, 'y');
    controller.abort();
  });

  test('a watch from "0" starts with the current objects', async () => {
    const source = createMemorySource();
    source.put('secrets', secret('ns', 'a'));
    const controller = new AbortController();
    const it = source
      .watch('secrets', 'ns', { resourceVersion: '0', signal: controller.signal })
      [Symbol.asyncIterator]();
    const event = await nextWithin(it, 'initial ADDED');
    assert.equal(event.type, 'ADDED');
    controller.abort();
  });

  test('close ends watches and refuses further calls', async () => {
    const source = createMemorySource();
    const it = source
      .watch('secrets', 'ns', {
        resourceVersion: source.resourceVersion,
        signal: new AbortController().signal,
      })
      [Symbol.asyncIterator]();
    const pending = it.next();
    await source.stop();
    assert.deepEqual(await pending, { done: true, value: undefined });
    await assert.rejects(source.list('secrets', 'ns'), (err: unknown) =>
      isBerthError(err, 'BERTH_SHUT_DOWN'),
    );
  });
});

describe('counting and gated sources', () => {
  test('countingSource records actions like a fake clientset', async () => {
    const memory = createMemorySource();
    memory.put('secrets', secret('ns', 'a'));
    const source = countingSource(memory);
    await source.get('secrets', 'ns', 'a');
    await source.list('configmaps', 'ns');
    source.watch('secrets', 'ns', { resourceVersion: '1', signal: AbortSignal.abort() });
    assert.deepEqual(source.actions(), ['get secrets', 'list configmaps', 'watch secrets']);
    assert.equal(source.count('get'), 1);
    assert.equal(source.count('list', 'secrets'), 0);
    source.reset();
    assert.deepEqual(source.actions(), []);
  });

  test('gatedSource holds lists until opened, and releases aborted ones', async () => {
    const memory = createMemorySource();
    memory.put('secrets', secret('ns', 'a'));
    const source = gatedSource(memory);
    const held = source.list('secrets', 'ns');
    const controller = new AbortController();
    const aborted = source.list('secrets', 'ns', { signal: controller.signal });
    assert.equal(source.heldLists, 2);
    controller.abort();
    await assert.rejects(aborted, (err: unknown) => isBerthError(err, 'BERTH_ABORTED'));
    assert.equal(source.heldLists, 1);
    source.open();
    assert.equal((await held).items.length, 1);
    assert.equal((await source.list('secrets', 'ns')).items.length, 1);
  });
});
