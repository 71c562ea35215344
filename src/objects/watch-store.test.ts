import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { isBerthError } from '../common/index.js';
import { countingSource, FakeClock, gatedSource, secret, waitFor } from '../testing/index.js';
import type { KubeObject } from './source.js';
import { createMemorySource } from './sources/memory-source.js';
import { createWatchStore, type WatchStore, type WatchStoreOptions } from './watch-store.js';

const SYNC_TIMEOUT = 'failed to sync secret cache: timed out waiting for the condition';

function setup(options: Partial<WatchStoreOptions> & { gated?: boolean } = {}) {
  const memory = createMemorySource();
  const gate = gatedSource(memory, { open: !options.gated });
  const source = countingSource(gate);
  const clock = new FakeClock();
  const store = createWatchStore({
    source,
    resource: 'secrets',
    groupResource: 'secret',
    clock,
    maxIdleTimeMs: 60_000,
    ...options,
  });
  return { memory, gate, source, clock, store };
}

/** Guards awaits that should settle on their own, so a bug fails the test instead of hanging it. */
async function soon<T>(promise: Promise<T>, what = 'operation'): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not settle`)), 10_000);
  });
  try {
    return await Promise.race([promise, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

async function getOrCode(store: WatchStore, ns: string, name: string): Promise<KubeObject | string> {
  try {
    return await soon(store.get(ns, name), `get ${ns}/${name}`);
  } catch (err) {
    if (isBerthError(err)) return err.code;
    throw err;
  }
}

/** The value or the error, so a rejection that happens while the clock advances is never unhandled. */
function settled<T>(promise: Promise<T>): Promise<T | unknown> {
  return promise.catch((err: unknown) => err);
}

const dataOf = (value: KubeObject | string) => (typeof value === 'string' ? value : value.data);

describe('watch store (upstream watch_based_manager_test)', () => {
  test('#1 basic: NotFound, then added, deleted, and unregistered', async (t) => {
    const { memory, store } = setup();
    t.after(() => store.stop());
    store.addReference('ns', 'name', 'pod');
    await assert.rejects(soon(store.get('ns', 'name')), (err: unknown) => {
      assert.ok(isBerthError(err, 'BERTH_OBJECT_NOT_FOUND'));
      assert.equal(err.message, 'secret "name" not found');
      return true;
    });
    memory.put('secrets', secret('ns', 'name', { data: { k: 'djE=' } }));
    await waitFor(
      'added secret visible',
      async () => typeof (await getOrCode(store, 'ns', 'name')) === 'object',
    );
    memory.remove('secrets', 'ns', 'name');
    await waitFor(
      'deleted secret gone',
      async () => (await getOrCode(store, 'ns', 'name')) === 'BERTH_OBJECT_NOT_FOUND',
    );
    store.deleteReference('ns', 'name', 'pod');
    await assert.rejects(store.get('ns', 'name'), /object "ns"\/"name" not registered/);
  });

  test('#2 multiple registrations share one list and one watch', async (t) => {
    const { source, store } = setup();
    t.after(() => store.stop());
    store.addReference('ns', 'name', 'pod');
    await waitFor('list and watch', () => source.actions().length === 2);
    assert.deepEqual(source.actions(), ['list secrets', 'watch secrets']);
    for (let i = 0; i < 20; i++) {
      store.addReference('ns', 'name', `pod-${i}`);
      store.deleteReference('ns', 'name', `pod-${i}`);
    }
    assert.deepEqual(source.actions(), ['list secrets', 'watch secrets']);
    store.deleteReference('ns', 'name', 'pod');
    await assert.rejects(store.get('ns', 'name'), /not registered/);
    assert.equal(source.actions().length, 2);
    assert.equal(store.watchesOpen(), 0);
  });

  const cases: Array<{
    label: string;
    initial?: KubeObject;
    update: KubeObject;
    runningAfterUpdate: boolean;
  }> = [
    {
      label: 'missing → mutable',
      update: secret('ns', 'name', { data: { v: '2' } }),
      runningAfterUpdate: true,
    },
    {
      label: 'missing → immutable',
      update: secret('ns', 'name', { data: { v: '2' }, immutable: true }),
      runningAfterUpdate: false,
    },
    {
      label: 'mutable → mutable',
      initial: secret('ns', 'name', { data: { v: '1' } }),
      update: secret('ns', 'name', { data: { v: '2' } }),
      runningAfterUpdate: true,
    },
    {
      label: 'mutable → immutable',
      initial: secret('ns', 'name', { data: { v: '1' } }),
      update: secret('ns', 'name', { data: { v: '2' }, immutable: true }),
      runningAfterUpdate: false,
    },
  ];
  for (const c of cases) {
    test(`#3 immutable stops the reflector: ${c.label}`, async (t) => {
      const { memory, store } = setup();
      t.after(() => store.stop());
      if (c.initial) memory.put('secrets', c.initial);
      store.addReference('ns', 'name', 'pod');
      const first = await getOrCode(store, 'ns', 'name');
      assert.deepEqual(dataOf(first), c.initial ? c.initial.data : 'BERTH_OBJECT_NOT_FOUND');
      assert.equal(store.itemState('ns', 'name')?.running, true);
      memory.put('secrets', c.update);
      await waitFor('update seen', async () => {
        const got = await getOrCode(store, 'ns', 'name');
        return typeof got === 'object' && got.data?.v === '2';
      });
      assert.equal(store.itemState('ns', 'name')?.running, c.runningAfterUpdate);
    });
  }

  test('#3 immutable stops the reflector: initially immutable', async (t) => {
    const { memory, store } = setup();
    t.after(() => store.stop());
    memory.put('secrets', secret('ns', 'name', { data: { v: '1' }, immutable: true }));
    store.addReference('ns', 'name', 'pod');
    assert.deepEqual(dataOf(await getOrCode(store, 'ns', 'name')), { v: '1' });
    assert.equal(store.itemState('ns', 'name')?.running, false);
    assert.equal(store.itemState('ns', 'name')?.immutable, true);
    assert.equal(store.watchesOpen(), 0);
  });

  test('#4 max idle time: recycled when idle, restarted on access, kept while read', async (t) => {
    const { memory, source, clock, store } = setup();
    t.after(() => store.stop());
    memory.put('secrets', secret('ns', 'name', { data: { v: '1' } }));
    store.addReference('ns', 'name', 'pod');
    assert.deepEqual(dataOf(await getOrCode(store, 'ns', 'name')), { v: '1' });
    assert.equal(store.itemState('ns', 'name')?.running, true);

    await clock.advance(90_000);
    store.recycleIdle();
    assert.equal(store.itemState('ns', 'name')?.running, false);
    assert.equal(store.itemState('ns', 'name')?.initialized, false);

    assert.deepEqual(dataOf(await getOrCode(store, 'ns', 'name')), { v: '1' });
    assert.equal(store.itemState('ns', 'name')?.running, true);
    await waitFor('re-listed and watching', () => source.actions().length === 4);
    assert.deepEqual(source.actions(), ['list secrets', 'watch secrets', 'list secrets', 'watch secrets']);

    for (let i = 0; i < 3; i++) {
      await clock.advance(20_000);
      await getOrCode(store, 'ns', 'name');
    }
    store.recycleIdle();
    assert.equal(store.itemState('ns', 'name')?.running, true);
  });

  test('#5 a slow initial list is never recycled', async (t) => {
    const { memory, gate, clock, store } = setup({ gated: true });
    t.after(() => store.stop());
    memory.put('secrets', secret('ns', 'name', { data: { v: '1' } }));
    store.addReference('ns', 'name', 'pod');
    await waitFor('list held at the gate', () => gate.heldLists === 1);
    await clock.advance(90_000);
    store.recycleIdle();
    assert.deepEqual(
      {
        running: store.itemState('ns', 'name')?.running,
        initialized: store.itemState('ns', 'name')?.initialized,
      },
      { running: true, initialized: false },
    );

    const pending = settled(store.get('ns', 'name'));
    await clock.advance(1_000);
    const failure = await soon(pending);
    assert.ok(isBerthError(failure, 'BERTH_CACHE_SYNC_TIMEOUT'));
    assert.equal(failure.message, SYNC_TIMEOUT);

    await clock.advance(29_000); // +120 s: the list finishes
    gate.open();
    await waitFor('initialised', () => store.itemState('ns', 'name')?.initialized === true);
    store.recycleIdle(); // the failed get above counted as an access
    assert.equal(store.itemState('ns', 'name')?.running, true);
    assert.deepEqual(dataOf(await getOrCode(store, 'ns', 'name')), { v: '1' });
  });

  test('#6 references are counted per pod uid and never go negative', async (t) => {
    const { store } = setup();
    t.after(() => store.stop());
    const count = () => store.itemState('ns1', 'secret1')?.refsByPod.pod1 ?? 0;
    const add = (pod: string, ns = 'ns1', name = 'secret1') => store.addReference(ns, name, pod);
    const del = (pod: string, ns = 'ns1', name = 'secret1') => store.deleteReference(ns, name, pod);

    const steps = (ops: Array<() => void>) =>
      ops.map((op) => {
        op();
        return count();
      });
    assert.deepEqual(
      steps([() => add('pod1'), () => add('pod1'), () => del('pod1'), () => del('pod1')]),
      [1, 2, 1, 0],
    );
    assert.deepEqual(steps([() => del('pod1')]), [0]);
    assert.deepEqual(steps([() => add('pod1'), () => del('pod1'), () => del('pod1')]), [1, 0, 0]);
    assert.deepEqual(
      steps([
        () => add('pod1'),
        () => del('pod2'),
        () => del('pod1', 'ns1', 'secret2'),
        () => del('pod1', 'ns2', 'secret1'),
      ]),
      [1, 1, 1, 1],
    );
    // Divergence from upstream: the stray delete from pod2 left no -1 behind, so the
    // item and its watch go away with pod1's last reference.
    assert.deepEqual(store.itemState('ns1', 'secret1')?.refsByPod, { pod1: 1 });
    del('pod1');
    assert.equal(store.itemState('ns1', 'secret1'), undefined);
    assert.equal(store.watchesOpen(), 0);
  });
});

describe('watch store lifecycle', () => {
  test('a get waits for the first list at most syncTimeoutMs on the clock', async (t) => {
    const { memory, gate, clock, store } = setup({ gated: true, syncTimeoutMs: 5_000 });
    t.after(() => store.stop());
    memory.put('secrets', secret('ns', 'name', { data: { v: '1' } }));
    store.addReference('ns', 'name', 'pod');
    const timingOut = settled(store.get('ns', 'name'));
    await clock.advance(4_999);
    const waiting = store.get('ns', 'name');
    await clock.advance(1);
    assert.match(String(await soon(timingOut)), /failed to sync secret cache/);
    gate.open(); // the second get is answered by the sync, before its own timeout
    assert.deepEqual((await soon(waiting)).data, { v: '1' });
  });

  test('maxIdleTime is raised to one minute', async (t) => {
    const { memory, clock, store } = setup({ maxIdleTimeMs: 1_000 });
    t.after(() => store.stop());
    assert.equal(store.maxIdleTimeMs, 60_000);
    memory.put('secrets', secret('ns', 'name'));
    store.addReference('ns', 'name', 'pod');
    await getOrCode(store, 'ns', 'name');
    await clock.advance(30_000);
    store.recycleIdle();
    assert.equal(store.itemState('ns', 'name')?.running, true);
  });

  test('start() recycles every minute; a registered but never read item goes at the first tick after syncing', async (t) => {
    const { memory, clock, store } = setup();
    t.after(() => store.stop());
    memory.put('secrets', secret('ns', 'name'));
    store.start();
    store.start();
    store.addReference('ns', 'name', 'pod');
    await waitFor('synced', () => store.itemState('ns', 'name')?.initialized === true);
    assert.equal(store.itemState('ns', 'name')?.running, true);
    await clock.advance(60_000);
    assert.equal(store.itemState('ns', 'name')?.running, false);
  });

  test('stop stops every watch; later gets fail to sync except frozen immutable objects', async () => {
    const { memory, source, clock, store } = setup();
    memory.put('secrets', secret('ns', 'mutable', { data: { v: '1' } }));
    memory.put('secrets', secret('ns', 'frozen', { data: { v: '1' }, immutable: true }));
    store.addReference('ns', 'mutable', 'pod');
    store.addReference('ns', 'frozen', 'pod');
    assert.equal(typeof (await getOrCode(store, 'ns', 'mutable')), 'object');
    assert.equal(typeof (await getOrCode(store, 'ns', 'frozen')), 'object');
    await store.stop();
    await store.stop(); // memoised
    assert.equal(store.state, 'stopped');
    assert.equal(store.watchesOpen(), 0);
    source.reset();

    const mutable = settled(store.get('ns', 'mutable'));
    await clock.advance(1_000);
    assert.match(String(await soon(mutable)), /failed to sync secret cache/);
    assert.deepEqual((await soon(store.get('ns', 'frozen'))).data, { v: '1' });

    store.addReference('ns', 'late', 'pod'); // tracked, but no reflector is started
    const late = settled(store.get('ns', 'late'));
    await clock.advance(1_000);
    assert.match(String(await soon(late)), /failed to sync secret cache/);
    assert.deepEqual(source.actions(), []);
  });
});

test('aborting the start signal shuts the store down', async () => {
  const { memory, clock, store } = setup();
  memory.put('secrets', secret('ns', 'name'));
  const controller = new AbortController();
  store.start(controller.signal);
  store.addReference('ns', 'name', 'pod');
  await getOrCode(store, 'ns', 'name');
  assert.equal(store.watchesOpen(), 1);
  controller.abort();
  assert.equal(store.watchesOpen(), 0);
  assert.equal(clock.pendingTimers, 0); // the recycle timer is gone too
  await store.stop();
});

describe('immutable objects deleted and recreated (kubernetes#131589)', () => {
  async function frozenThenRecreated(immutableRecheckMs: number) {
    const { memory, source, clock, store } = setup({ immutableRecheckMs });
    memory.put('secrets', secret('ns', 'cert', { data: { v: '1' }, immutable: true }));
    store.addReference('ns', 'cert', 'pod');
    assert.deepEqual(dataOf(await getOrCode(store, 'ns', 'cert')), { v: '1' });
    assert.equal(store.itemState('ns', 'cert')?.running, false);

    memory.remove('secrets', 'ns', 'cert');
    memory.put('secrets', secret('ns', 'cert', { data: { v: '2' }, immutable: true }));
    source.reset();
    await clock.advance(30_000);
    // Within the interval the frozen copy is served without asking the source.
    assert.deepEqual(dataOf(await getOrCode(store, 'ns', 'cert')), { v: '1' });
    assert.deepEqual(source.actions(), []);
    await clock.advance(30_000);
    const after = dataOf(await getOrCode(store, 'ns', 'cert'));
    return { after, actions: source.actions(), store };
  }

  test('after the re-check interval a get returns the recreated object', async () => {
    const { after, actions, store } = await frozenThenRecreated(60_000);
    try {
      assert.deepEqual(after, { v: '2' });
      // One GET to re-check, then one list (and watch) to pick up the new object.
      assert.deepEqual(actions.slice(0, 2), ['get secrets', 'list secrets']);
      assert.equal(store.itemState('ns', 'cert')?.immutable, true); // frozen again, on the new copy
    } finally {
      await store.stop();
    }
  });

  test('control: without the re-check (kubelet behaviour) the stale copy is served forever', async () => {
    const { after, actions, store } = await frozenThenRecreated(Number.POSITIVE_INFINITY);
    try {
      assert.deepEqual(after, { v: '1' });
      assert.deepEqual(actions, []);
    } finally {
      await store.stop();
    }
  });

  test('a deleted immutable object becomes NotFound; an unchanged one stays frozen with one GET per interval', async (t) => {
    const { memory, source, clock, store } = setup({ immutableRecheckMs: 60_000 });
    t.after(() => store.stop());
    memory.put('secrets', secret('ns', 'kept', { data: { v: '1' }, immutable: true }));
    memory.put('secrets', secret('ns', 'gone', { data: { v: '1' }, immutable: true }));
    store.addReference('ns', 'kept', 'pod');
    store.addReference('ns', 'gone', 'pod');
    await getOrCode(store, 'ns', 'kept');
    await getOrCode(store, 'ns', 'gone');
    memory.remove('secrets', 'ns', 'gone');
    source.reset();
    await clock.advance(60_000);
    await Promise.all([
      getOrCode(store, 'ns', 'kept'),
      getOrCode(store, 'ns', 'kept'),
      getOrCode(store, 'ns', 'kept'),
    ]);
    assert.equal(source.count('get'), 1); // concurrent gets share one re-check
    assert.equal(store.itemState('ns', 'kept')?.running, false);
    assert.equal(await getOrCode(store, 'ns', 'gone'), 'BERTH_OBJECT_NOT_FOUND');
    assert.equal(store.itemState('ns', 'gone')?.running, true); // watched again, for a recreate
  });

  test('a failed re-check keeps serving the frozen copy', async (t) => {
    const memory = createMemorySource();
    let failGets = false;
    const source = {
      ...memory,
      get: (...args: Parameters<typeof memory.get>) =>
        failGets ? Promise.reject(new Error('source down')) : memory.get(...args),
    };
    const clock = new FakeClock();
    const store = createWatchStore({ source, resource: 'secrets', clock, maxIdleTimeMs: 60_000 });
    t.after(() => store.stop());
    memory.put('secrets', secret('ns', 'cert', { data: { v: '1' }, immutable: true }));
    store.addReference('ns', 'cert', 'pod');
    await getOrCode(store, 'ns', 'cert');
    failGets = true;
    await clock.advance(60_000);
    assert.deepEqual(dataOf(await getOrCode(store, 'ns', 'cert')), { v: '1' });
    assert.equal(store.itemState('ns', 'cert')?.immutable, true);
  });
});
