import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { BerthError, silentLogger } from '../common/index.js';
import { countingSource, FakeClock, secret, waitFor } from '../testing/index.js';
import { DEFAULT_REFLECTOR_BACKOFF } from './objects-options.js';
import { runReflector } from './reflector.js';
import type { KubeObject, ObjectSource, WatchEvent } from './source.js';
import { createMemorySource } from './sources/memory-source.js';

function recordingSink() {
  const state: { object: KubeObject | undefined; replaced: number; updates: number } = {
    object: undefined,
    replaced: 0,
    updates: 0,
  };
  return {
    state,
    sink: {
      replace(object: KubeObject | undefined) {
        state.object = object;
        state.replaced += 1;
      },
      update(object: KubeObject | undefined) {
        state.object = object;
        state.updates += 1;
      },
    },
  };
}

function start(source: ObjectSource, clock: FakeClock, name = 'name') {
  const { state, sink } = recordingSink();
  const controller = new AbortController();
  const done = runReflector(
    { source, resource: 'secrets', namespace: 'ns', name, sink, clock, logger: silentLogger },
    controller.signal,
  );
  return { state, controller, done };
}

describe('reflector', () => {
  test('lists, then applies added/modified/deleted for its object only, and stops on abort', async () => {
    const memory = createMemorySource();
    const source = countingSource(memory);
    const clock = new FakeClock();
    memory.put('secrets', secret('ns', 'other'));
    const { state, controller, done } = start(source, clock);
    await waitFor('listed and watching', () => source.actions().length === 2 && memory.watcherCount === 1);
    assert.equal(state.replaced, 1);
    assert.equal(state.object, undefined);

    memory.put('secrets', secret('ns', 'name', { data: { v: '1' } }));
    await waitFor('added', () => state.object?.data?.v === '1');
    memory.put('secrets', secret('ns', 'other', { data: { v: 'x' } }));
    memory.bookmark();
    memory.put('secrets', secret('ns', 'name', { data: { v: '2' } }));
    await waitFor('modified', () => state.object?.data?.v === '2');
    memory.remove('secrets', 'ns', 'name');
    await waitFor('deleted', () => state.object === undefined);
    assert.equal(state.updates, 3); // the other object and the bookmark were not applied

    controller.abort();
    await done;
    assert.equal(memory.watcherCount, 0);
    memory.put('secrets', secret('ns', 'name', { data: { v: '3' } }));
    assert.equal(state.object, undefined);
    assert.deepEqual(source.actions(), ['list secrets', 'watch secrets']);
  });

  test('a watch that ends is followed by a re-list after the 800 ms backoff', async () => {
    const memory = createMemorySource();
    const source = countingSource(memory);
    const clock = new FakeClock();
    const { state, controller, done } = start(source, clock);
    await waitFor('watching', () => memory.watcherCount === 1);
    memory.disconnectWatchers();
    memory.put('secrets', secret('ns', 'name', { data: { v: 'while-away' } }));
    await clock.waitForTimers(1);
    await clock.advance(799);
    assert.equal(source.count('list'), 1);
    await clock.advance(1);
    await waitFor('re-listed', () => source.count('list') === 2 && state.replaced === 2);
    assert.equal(state.object?.data?.v, 'while-away');
    controller.abort();
    await done;
  });

  test('BERTH_RESOURCE_VERSION_TOO_OLD from the watch leads to a re-list', async () => {
    const memory = createMemorySource();
    let tooOld = true;
    const source = countingSource({
      ...memory,
      watch(resource, namespace, options) {
        if (!tooOld) return memory.watch(resource, namespace, options);
        tooOld = false;
        return {
          [Symbol.asyncIterator]: (): AsyncIterator<WatchEvent> => ({
            next: () =>
              Promise.reject(new BerthError('BERTH_RESOURCE_VERSION_TOO_OLD', 'too old resource version')),
          }),
        };
      },
    });
    const clock = new FakeClock();
    memory.put('secrets', secret('ns', 'name', { data: { v: '1' } }));
    const { state, controller, done } = start(source, clock);
    await clock.waitForTimers(1);
    await clock.advance(800);
    await waitFor('re-listed and watching', () => memory.watcherCount === 1);
    assert.deepEqual(source.actions(), ['list secrets', 'watch secrets', 'list secrets', 'watch secrets']);
    assert.equal(state.replaced, 2);
    controller.abort();
    await done;
  });

  test('a watch from a compacted version is too old for the memory source, and the reflector recovers', async () => {
    const memory = createMemorySource({ historyLimit: 2 });
    const clock = new FakeClock();
    const source = countingSource(memory);
    const { state, controller, done } = start(source, clock);
    await waitFor('watching', () => memory.watcherCount === 1);
    memory.disconnectWatchers();
    for (let i = 0; i < 5; i++) memory.put('secrets', secret('ns', 'other', { data: { i: String(i) } }));
    memory.put('secrets', secret('ns', 'name', { data: { v: 'new' } }));
    await clock.waitForTimers(1);
    await clock.advance(800);
    await waitFor('re-listed', () => state.object?.data?.v === 'new');
    controller.abort();
    await done;
  });

  test('list failures back off exponentially, capped at 30 s', async () => {
    let lists = 0;
    const failing: ObjectSource = {
      ...createMemorySource(),
      list: async () => {
        lists += 1;
        throw new BerthError('BERTH_SOURCE_FAILED', 'unreachable');
      },
    };
    const clock = new FakeClock();
    const { controller, done } = start(failing, clock);
    const expectedDelays = [800, 1_600, 3_200, 6_400, 12_800, 25_600, 30_000, 30_000];
    for (const [i, delay] of expectedDelays.entries()) {
      await clock.waitForTimers(1);
      await clock.advance(delay - 1);
      assert.equal(lists, i + 1, `before the ${delay} ms backoff ends`);
      await clock.advance(1);
      await waitFor(`list ${i + 2}`, () => lists === i + 2);
    }
    assert.deepEqual(DEFAULT_REFLECTOR_BACKOFF, { initialMs: 800, maxMs: 30_000, factor: 2 });
    controller.abort();
    await done;
  });
});
