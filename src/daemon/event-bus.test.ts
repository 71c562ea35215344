import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { PluginEvent, PluginInstanceInfo } from '../common/index.js';
import { FakeClock } from '../testing/index.js';
import { EventBus } from './event-bus.js';

const plugin = (type: string, name: string): PluginInstanceInfo => ({
  type,
  name,
  version: 'v1',
  allocId: `/p/${name}.sock`,
  options: {},
});

async function take(iterable: AsyncIterable<PluginEvent>, count: number): Promise<PluginEvent[]> {
  const out: PluginEvent[] = [];
  for await (const event of iterable) {
    out.push(event);
    if (out.length === count) break;
  }
  return out;
}

describe('EventBus', () => {
  it('delivers to every subscriber, filtered by plugin type', async () => {
    const seen: string[] = [];
    const bus = new EventBus({ clock: new FakeClock(), onPublish: (e) => seen.push(e.type) });
    const all = bus.subscribe(undefined, { queueSize: 10 });
    const onlyA = bus.subscribe('a', { queueSize: 10 });
    bus.publish({ type: 'registered', at: 1, plugin: plugin('a', 'x') });
    bus.publish({ type: 'registered', at: 2, plugin: plugin('b', 'y') });
    bus.publish({ type: 'discovered', at: 3, socketPath: '/p/z.sock' });
    bus.publish({ type: 'storage-error', at: 4, error: { code: 'BERTH_STORAGE_CORRUPT', message: 'bad' } });
    assert.deepEqual(
      (await take(all, 4)).map((e) => e.at),
      [1, 2, 3, 4],
    );
    assert.deepEqual(
      (await take(onlyA, 2)).map((e) => e.at),
      [1, 4],
      'type filter keeps storage errors, drops other types and socket events',
    );
    assert.deepEqual(seen, ['registered', 'registered', 'discovered', 'storage-error']);
    assert.equal(bus.subscriberCount, 0, 'breaking out unsubscribes');
  });

  it('tells a slow subscriber how many events it missed instead of stalling the publisher', async () => {
    const clock = new FakeClock(5000);
    const bus = new EventBus({ clock });
    const slow = bus.subscribe(undefined, { queueSize: 2 });
    for (let i = 1; i <= 5; i++) bus.publish({ type: 'registered', at: i, plugin: plugin('a', `p${i}`) });
    const events = await take(slow, 3);
    assert.deepEqual(events[0], { type: 'lagged', at: 5000, dropped: 3 });
    assert.deepEqual(
      events.slice(1).map((e) => e.at),
      [4, 5],
    );
  });

  it('ends every stream on stop and refuses new ones', async () => {
    const bus = new EventBus({ clock: new FakeClock() });
    const sub = bus.subscribe(undefined, { queueSize: 4 });
    bus.publish({ type: 'discovered', at: 1, socketPath: '/s' });
    await bus.stop();
    assert.equal(bus.state, 'stopped');
    assert.deepEqual(
      (await take(sub, 10)).map((e) => e.type),
      ['discovered'],
    );
    const late = bus.subscribe(undefined, { queueSize: 4 });
    assert.deepEqual(await take(late, 1), []);
    assert.equal(bus.subscriberCount, 0);
  });

  it('ends a stream when its signal aborts, like the registry subscribe', async () => {
    const bus = new EventBus({ clock: new FakeClock() });
    const stop = new AbortController();
    const sub = bus.subscribe(undefined, { queueSize: 4, signal: stop.signal });
    const other = bus.subscribe(undefined, { queueSize: 4 });
    bus.publish({ type: 'discovered', at: 1, socketPath: '/s' });
    stop.abort();
    assert.equal(bus.subscriberCount, 1, 'only the aborted subscriber is gone');
    assert.deepEqual(
      (await take(sub, 10)).map((e) => e.at),
      [1],
      'events queued before the abort are still delivered',
    );
    bus.publish({ type: 'discovered', at: 2, socketPath: '/s' });
    assert.deepEqual(
      (await take(other, 2)).map((e) => e.at),
      [1, 2],
    );
    const aborted = bus.subscribe(undefined, { queueSize: 4, signal: AbortSignal.abort() });
    assert.deepEqual(await take(aborted, 1), []);
    await bus.stop();
  });
});
