import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { PluginEvent, PluginInstanceInfo } from '../common/index.js';
import { FakeClock } from '../testing/index.js';
import { EventBus, type StreamItem } from './event-bus.js';

const plugin = (type: string, name: string): PluginInstanceInfo => ({
  type,
  name,
  version: 'v1',
  allocId: `/p/${name}.sock`,
  options: {},
});

async function takeItems(
  iterable: AsyncIterable<StreamItem<PluginEvent>>,
  count: number,
): Promise<StreamItem<PluginEvent>[]> {
  const out: StreamItem<PluginEvent>[] = [];
  if (count === 0) return out;
  for await (const item of iterable) {
    out.push(item);
    if (out.length === count) break;
  }
  return out;
}

/** The events (a lag marker as a `lagged` event), without their ids. */
async function take(iterable: AsyncIterable<StreamItem<PluginEvent>>, count: number): Promise<PluginEvent[]> {
  return (await takeItems(iterable, count)).map((item) =>
    item.kind === 'event'
      ? item.event
      : item.kind === 'lagged'
        ? { type: 'lagged', at: item.at, dropped: item.dropped }
        : { type: 'lagged', at: item.at, dropped: -1 },
  );
}

const discovered = (at: number): PluginEvent => ({ type: 'discovered', at, socketPath: `/s/${at}` });

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

  it('numbers every event and replays what a resuming subscriber missed, in order and filtered', async () => {
    const bus = new EventBus({ clock: new FakeClock(), ringSize: 4 });
    const live = bus.subscribe(undefined, { queueSize: 10 });
    bus.publish({ type: 'registered', at: 1, plugin: plugin('a', 'x') });
    bus.publish({ type: 'registered', at: 2, plugin: plugin('b', 'y') });
    bus.publish(discovered(3));
    const seen = await takeItems(live, 3);
    const ids = seen.map((item) => (item.kind === 'event' ? item.id : -1));
    assert.deepEqual(ids, [ids[0], (ids[0] ?? 0) + 1, (ids[0] ?? 0) + 2], 'ids increase by one');
    assert.equal(bus.lastId, ids[2]);

    // A client that saw the first event resumes: the two after it, then live ones.
    const resumed = bus.subscribe(undefined, { queueSize: 10, after: ids[0] as number });
    bus.publish(discovered(4));
    assert.deepEqual(
      (await takeItems(resumed, 3)).map((item) =>
        item.kind === 'event' ? [item.id, item.event.at] : item.kind,
      ),
      [
        [ids[1], 2],
        [ids[2], 3],
        [(ids[2] as number) + 1, 4],
      ],
    );
    // The filter applies to the replay too.
    const onlyA = bus.subscribe('a', { queueSize: 10, after: (ids[0] as number) - 1 });
    assert.deepEqual(
      (await take(onlyA, 1)).map((e) => e.at),
      [1],
    );
    // Resuming from the newest id replays nothing.
    const current = bus.subscribe(undefined, { queueSize: 10, after: bus.lastId });
    bus.publish(discovered(5));
    assert.deepEqual(
      (await take(current, 1)).map((e) => e.at),
      [5],
    );
    await bus.stop();
  });

  it('sends reset, with the id to resume from, for an id older than the ring or never handed out', async () => {
    const clock = new FakeClock(7);
    const bus = new EventBus({ clock, ringSize: 2 });
    const first = bus.lastId + 1;
    for (let at = 1; at <= 5; at += 1) bus.publish(discovered(at));
    // The ring holds the last two (ids first+3 and first+4): first+2 can still resume, first+1 cannot.
    const ok = bus.subscribe(undefined, { queueSize: 10, after: first + 2 });
    assert.deepEqual(
      (await take(ok, 2)).map((e) => e.at),
      [4, 5],
    );
    for (const after of [first + 1, 0, bus.lastId + 10]) {
      const stale = bus.subscribe(undefined, { queueSize: 10, after });
      bus.publish(discovered(100 + after));
      const [reset, next] = await takeItems(stale, 2);
      assert.deepEqual(reset, {
        kind: 'reset',
        at: 7,
        id: (next as { id: number }).id - 1,
        lastEventId: after,
        oldestId: (next as { id: number }).id - 2,
      });
      assert.equal(next?.kind, 'event', 'live events follow the reset');
    }
    const none = new EventBus({ clock, ringSize: 0 });
    none.publish(discovered(1));
    const [reset] = await takeItems(none.subscribe(undefined, { queueSize: 4, after: none.lastId - 1 }), 1);
    assert.equal(reset?.kind, 'reset');
    await bus.stop();
    await none.stop();
  });

  it('starts its ids from the clock, so a restarted daemon does not reuse its predecessor ids', () => {
    const early = new EventBus({ clock: new FakeClock(1_000) });
    const later = new EventBus({ clock: new FakeClock(2_000) });
    for (let i = 0; i < 500; i += 1) early.publish(discovered(i));
    assert.ok(later.lastId > early.lastId);
  });
});
