import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { PluginEvent, RegistryEvent } from '../common/index.js';
import { nextWithin, nodePlugin } from '../testing/index.js';
import { createRegistry } from './index.js';

function describeEvent(event: RegistryEvent): string {
  return event.type === 'lagged'
    ? `lagged ${event.dropped}`
    : `${event.type} ${event.plugin.type}/${event.plugin.allocId}`;
}

async function take(events: AsyncIterator<RegistryEvent>, count: number): Promise<string[]> {
  const seen: string[] = [];
  for (let i = 0; i < count; i++)
    seen.push(describeEvent(await nextWithin(events, `event ${i + 1} of ${count}`)));
  return seen;
}

/** Asserts the stream ends (within nextWithin's deadline) instead of yielding another event. */
async function ended(events: AsyncIterator<RegistryEvent>, what: string): Promise<void> {
  // Wrapped so that the end of the stream is a value nextWithin can hand back.
  const result = await nextWithin(
    { next: async () => ({ done: false, value: await events.next() }) } as AsyncIterator<
      IteratorResult<RegistryEvent>
    >,
    what,
  );
  assert.equal(result.done, true, `${what}: stream ended`);
}

describe('registry: subscriptions', () => {
  it('fans one event out to every subscriber', async () => {
    const registry = createRegistry();
    const a = registry.subscribe('csi-node')[Symbol.asyncIterator]();
    const b = registry.subscribe('csi-node')[Symbol.asyncIterator]();
    await registry.registerPlugin(nodePlugin(0));
    assert.deepEqual(await take(a, 1), ['registered csi-node/alloc-0']);
    assert.deepEqual(await take(b, 1), ['registered csi-node/alloc-0']);
    await registry.stop();
  });

  it('aborting one subscription ends it and leaves the others alone; publishing to nobody is fine', async () => {
    const registry = createRegistry();
    const controller = new AbortController();
    const cancelled = registry.subscribe('csi-node', { signal: controller.signal })[Symbol.asyncIterator]();
    const kept = registry.subscribe('csi-node')[Symbol.asyncIterator]();
    const pending = cancelled.next();
    controller.abort();
    assert.equal((await pending).done, true);
    await registry.registerPlugin(nodePlugin(0));
    assert.deepEqual(await take(kept, 1), ['registered csi-node/alloc-0']);
    await ended(cancelled, 'cancelled subscriber');
    // No subscribers left for this type at all: registering still works.
    await registry.registerPlugin(nodePlugin(0, { type: 'nobody-listens' }));
    assert.equal(registry.listPlugins('nobody-listens')?.length, 1);
    await registry.stop();
  });

  it('an already-aborted signal gives an ended stream', async () => {
    const registry = createRegistry();
    const events = registry.subscribe('csi-node', { signal: AbortSignal.abort() })[Symbol.asyncIterator]();
    await registry.registerPlugin(nodePlugin(0));
    await ended(events, 'pre-aborted subscriber');
  });

  it('delivers register A, register B, deregister A in order; filters by type; undefined means all types', async () => {
    const registry = createRegistry();
    const node = registry.subscribe('csi-node')[Symbol.asyncIterator]();
    const controller = registry.subscribe('csi-controller')[Symbol.asyncIterator]();
    const all = registry.subscribe(undefined)[Symbol.asyncIterator]();
    await registry.registerPlugin(nodePlugin(0));
    await registry.registerPlugin(nodePlugin(7, { type: 'csi-controller' }));
    await registry.registerPlugin(nodePlugin(1));
    await registry.deregisterPlugin('csi-node', 'my-plugin', 'alloc-0');
    assert.deepEqual(await take(node, 3), [
      'registered csi-node/alloc-0',
      'registered csi-node/alloc-1',
      'deregistered csi-node/alloc-0',
    ]);
    assert.deepEqual(await take(controller, 1), ['registered csi-controller/alloc-7']);
    assert.deepEqual(await take(all, 4), [
      'registered csi-node/alloc-0',
      'registered csi-controller/alloc-7',
      'registered csi-node/alloc-1',
      'deregistered csi-node/alloc-0',
    ]);
    await registry.stop();
  });

  it('a subscriber that never reads blocks neither 1000 registrations nor another subscriber', async () => {
    const registry = createRegistry();
    registry.subscribe('csi-node'); // never read
    const reader = registry.subscribe('csi-node')[Symbol.asyncIterator]();
    for (let n = 0; n < 1000; n++) await registry.registerPlugin(nodePlugin(n));
    // Every call above returned; the reader gets all of them, in order.
    assert.equal(registry.listInstances('csi-node', 'my-plugin').length, 1000);
    const seen = await take(reader, 1000);
    assert.deepEqual(
      seen,
      Array.from({ length: 1000 }, (_, n) => `registered csi-node/alloc-${n}`),
    );
    await registry.stop();
  });

  it('a bounded subscriber that falls behind is told with a lagged event, then gets the newest events', async () => {
    const registry = createRegistry({ subscriberQueueSize: 100 });
    const bounded = registry.subscribe('csi-node', { queueSize: 5 })[Symbol.asyncIterator]();
    const roomy = registry.subscribe('csi-node')[Symbol.asyncIterator]();
    for (let n = 0; n < 20; n++) await registry.registerPlugin(nodePlugin(n));
    assert.deepEqual(await take(bounded, 6), [
      'lagged 15',
      'registered csi-node/alloc-15',
      'registered csi-node/alloc-16',
      'registered csi-node/alloc-17',
      'registered csi-node/alloc-18',
      'registered csi-node/alloc-19',
    ]);
    // The registry-wide bound (100) is not reached by the other subscriber.
    assert.deepEqual((await take(roomy, 20))[0], 'registered csi-node/alloc-0');
    await registry.stop();
  });

  it('applies the registry-wide queue bound by default', async () => {
    const registry = createRegistry({ subscriberQueueSize: 3 });
    const events = registry.subscribe(undefined)[Symbol.asyncIterator]();
    for (let n = 0; n < 10; n++) await registry.registerPlugin(nodePlugin(n));
    assert.deepEqual((await take(events, 1))[0], 'lagged 7');
    await registry.stop();
  });

  it('rejects a queue size that is not a positive integer', async () => {
    assert.throws(() => createRegistry({ subscriberQueueSize: 0 }), { code: 'BERTH_INVALID_ARGUMENT' });
    const registry = createRegistry();
    assert.throws(() => registry.subscribe('x', { queueSize: 1.5 }), {
      code: 'BERTH_INVALID_ARGUMENT',
      message: /queueSize must be a positive integer/,
    });
  });

  it('stop ends every stream, is memoised, and later changes are refused and publish nothing', async () => {
    const tapped: PluginEvent[] = [];
    const registry = createRegistry({ onEvent: (e) => tapped.push(e) });
    const a = registry.subscribe('csi-node')[Symbol.asyncIterator]();
    const b = registry.subscribe(undefined)[Symbol.asyncIterator]();
    await registry.registerPlugin(nodePlugin(0));
    const waiting = a.next();
    assert.equal((await waiting).done, false, 'the pending event is delivered first');
    const blocked = a.next();
    const stopping = registry.stop();
    assert.equal(registry.stop(), stopping, 'one stop, shared');
    await stopping;
    await registry[Symbol.asyncDispose]();
    assert.equal(registry.state, 'stopped');
    assert.equal((await blocked).done, true);
    // b still drains what was queued before shutdown, then ends.
    assert.deepEqual(await take(b, 1), ['registered csi-node/alloc-0']);
    await ended(b, 'all-types subscriber');
    // Nothing would persist a change any more (its storage is stopped after the registry): refused.
    await assert.rejects(registry.registerPlugin(nodePlugin(1)), { code: 'BERTH_SHUT_DOWN' });
    await assert.rejects(registry.deregisterPlugin('csi-node', 'my-plugin', 'alloc-0'), {
      code: 'BERTH_SHUT_DOWN',
    });
    assert.deepEqual(
      registry.listInstances('csi-node', 'my-plugin').map((i) => i.allocId),
      ['alloc-0'],
      'state is as it was at the stop',
    );
    assert.deepEqual(
      tapped.map((e) => e.type),
      ['registered'],
      'nothing published after shutdown',
    );
    await ended(registry.subscribe('csi-node')[Symbol.asyncIterator](), 'subscription after shutdown');
  });

  it('a consumer breaking out of for-await unsubscribes', async () => {
    const registry = createRegistry();
    const stream = registry.subscribe('csi-node');
    await registry.registerPlugin(nodePlugin(0));
    for await (const event of stream) {
      assert.equal(event.type, 'registered');
      break;
    }
    // Nothing left to deliver to; further registrations are fine.
    await registry.registerPlugin(nodePlugin(1));
    await ended(stream[Symbol.asyncIterator](), 'broken-out stream');
    await registry.stop();
  });
});
