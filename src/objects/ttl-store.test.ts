import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { BerthError, isBerthError } from '../common/index.js';
import { countedSecrets } from '../testing/harness/index.js';
import { FakeClock, secret } from '../testing/index.js';
import { notFoundError } from './errors.js';
import { getObjectTtlFromNode, type TtlAnswer } from './node-ttl.js';
import type { GetOptions, KubeObject } from './source.js';
import { createTtlStore, type GetObjectFn } from './ttl-store.js';

const NOT_REGISTERED = /object ".*"\/".*" not registered$/;

function storeOver(
  source: ReturnType<typeof countedSecrets>['source'],
  clock: FakeClock,
  defaultTtlMs: number,
  getTtl?: () => TtlAnswer,
) {
  return createTtlStore({
    getObject: (ns, name, options) => source.get('secrets', ns, name, options),
    clock,
    defaultTtlMs,
    ...(getTtl === undefined ? {} : { getTtl }),
  });
}

async function checkObject(
  store: { get(ns: string, n: string): Promise<KubeObject> },
  ns: string,
  name: string,
  shouldExist: boolean,
) {
  if (shouldExist) {
    await store.get(ns, name);
  } else {
    await assert.rejects(store.get(ns, name), (err: unknown) => {
      assert.ok(isBerthError(err, 'BERTH_OBJECT_NOT_REGISTERED'));
      assert.equal(err.message, `object "${ns}"/"${name}" not registered`);
      return true;
    });
  }
}

describe('TTL store (upstream cache_based_manager_test)', () => {
  test('#1 reference counting: add/delete make no calls; gets of registered objects fetch', async () => {
    const { source } = countedSecrets(['ns1', 'ns2', 'ns3', 'ns4'], ['name1', 'name2', 'name3', 'name4']);
    const store = storeOver(source, new FakeClock(), 0);
    store.addReference('ns1', 'name1', 'pod');
    store.addReference('ns2', 'name2', 'pod');
    store.addReference('ns1', 'name1', 'pod');
    store.addReference('ns1', 'name1', 'pod');
    store.deleteReference('ns1', 'name1', 'pod');
    store.deleteReference('ns2', 'name2', 'pod');
    store.addReference('ns3', 'name3', 'pod');
    assert.deepEqual(source.actions(), []);

    await store.get('ns1', 'name1');
    await assert.rejects(store.get('ns2', 'name2'), NOT_REGISTERED);
    await store.get('ns3', 'name3');
    assert.deepEqual(source.actions(), ['get secrets', 'get secrets']);

    await checkObject(store, 'ns1', 'name1', true);
    await checkObject(store, 'ns2', 'name2', false);
    await checkObject(store, 'ns3', 'name3', true);
    await checkObject(store, 'ns4', 'name4', false);
    assert.equal(store.references('ns1', 'name1'), 2);
    assert.equal(store.references('ns2', 'name2'), 0);
  });

  test('#2 deleting: NotFound is returned with the object the source sent alongside', async () => {
    const empty = secret('', '');
    let deleted = false;
    const getObject: GetObjectFn = async (_ns, name) => {
      if (deleted) throw notFoundError('secret', name, empty);
      return secret('ns', name, { metadata: { namespace: 'ns', name, resourceVersion: '10' } });
    };
    const store = createTtlStore({ getObject, clock: new FakeClock(), defaultTtlMs: 0 });
    store.addReference('ns', 'name', 'pod');
    const first = await store.get('ns', 'name');
    assert.equal(first.metadata.resourceVersion, '10');
    deleted = true;
    await assert.rejects(store.get('ns', 'name'), (err: unknown) => {
      assert.ok(isBerthError(err, 'BERTH_OBJECT_NOT_FOUND'));
      assert.equal(err.message, 'secret "name" not found');
      assert.deepEqual(err.details.object, empty);
      return true;
    });
  });

  const names = Array.from({ length: 10 }, (_, i) => `s${i}`);
  const hundredConcurrentGets = (store: { get(ns: string, n: string): Promise<KubeObject> }) =>
    Promise.all(names.flatMap((name) => Array.from({ length: 10 }, () => store.get('ns', name))));

  test('#3 TTL 0 always refreshes: 100 concurrent gets → 100 fetches', async () => {
    const { source } = countedSecrets(['ns'], names);
    const store = storeOver(source, new FakeClock(), 0);
    for (const name of names) store.addReference('ns', name, 'pod');
    await hundredConcurrentGets(store);
    assert.equal(source.count('get', 'secrets'), 100);
  });

  test('#4 default TTL never refreshes on a frozen clock: 100 concurrent gets → 10 fetches', async () => {
    const { source } = countedSecrets(['ns'], names);
    const store = storeOver(source, new FakeClock(), 60_000);
    for (const name of names) store.addReference('ns', name, 'pod');
    await hundredConcurrentGets(store);
    assert.equal(source.count('get', 'secrets'), 10);
  });

  test('#5 custom TTL: an age equal to the TTL is stale', async () => {
    const { source } = countedSecrets(['ns'], ['name']);
    const clock = new FakeClock();
    let ttl: TtlAnswer;
    const store = storeOver(source, clock, 60_000, () => ttl);
    store.addReference('ns', 'name', 'pod');
    const fetchesAfter = async (advanceMs: number) => {
      source.reset();
      await clock.advance(advanceMs);
      await store.get('ns', 'name');
      return source.count('get');
    };
    assert.equal(await fetchesAfter(0), 1); // an empty entry is always stale
    ttl = { ttlMs: 0 };
    assert.equal(await fetchesAfter(0), 1);
    ttl = { ttlMs: 5 * 60_000 };
    assert.equal(await fetchesAfter(0), 0);
    assert.equal(await fetchesAfter(4 * 60_000), 0);
    assert.equal(await fetchesAfter(60_000), 1); // exactly 5 min old
    ttl = undefined; // back to the 1 min default
    assert.equal(await fetchesAfter(55_000), 0);
    assert.equal(await fetchesAfter(5_000), 1); // exactly 60 s old
  });

  test('#6 TTL from the node annotation', async () => {
    const cases: Array<{ node: () => unknown; want: TtlAnswer }> = [
      {
        node: () => {
          throw new Error('no node');
        },
        want: undefined,
      },
      { node: async () => Promise.reject(new Error('no node')), want: undefined },
      { node: () => undefined, want: undefined },
      { node: () => ({ metadata: {} }), want: undefined },
      { node: () => ({ metadata: { annotations: {} } }), want: undefined },
      {
        node: () => ({ metadata: { annotations: { 'node.alpha.kubernetes.io/ttl': 'bad' } } }),
        want: undefined,
      },
      {
        node: () => ({ metadata: { annotations: { 'node.alpha.kubernetes.io/ttl': '1.5' } } }),
        want: undefined,
      },
      {
        node: () => ({ metadata: { annotations: { 'node.alpha.kubernetes.io/ttl': '0' } } }),
        want: { ttlMs: 0 },
      },
      {
        node: () => ({ metadata: { annotations: { 'node.alpha.kubernetes.io/ttl': '60' } } }),
        want: { ttlMs: 60_000 },
      },
      {
        node: async () => ({ metadata: { annotations: { 'node.alpha.kubernetes.io/ttl': '-5' } } }),
        want: { ttlMs: -5_000 },
      },
    ];
    for (const [i, c] of cases.entries()) {
      const getTtl = getObjectTtlFromNode(c.node as () => undefined);
      assert.deepEqual(await getTtl(), c.want, `case ${i}`);
    }
  });
});

describe('TTL store details', () => {
  test('a refresh of a good cached object asks for resourceVersion "0"; after an error it does not', async () => {
    const seen: GetOptions[] = [];
    let fail = false;
    const getObject: GetObjectFn = async (ns, name, options) => {
      seen.push(options);
      if (fail) throw notFoundError('secret', name);
      return secret(ns, name);
    };
    const store = createTtlStore({ getObject, clock: new FakeClock(), defaultTtlMs: 0 });
    store.addReference('ns', 'a', 'pod');
    await store.get('ns', 'a');
    await store.get('ns', 'a');
    fail = true;
    await assert.rejects(store.get('ns', 'a'));
    fail = false;
    await store.get('ns', 'a');
    assert.deepEqual(seen, [{}, { resourceVersion: '0' }, { resourceVersion: '0' }, {}]);
  });

  test('a transient error with nothing cached is returned and not cached', async () => {
    let calls = 0;
    const getObject: GetObjectFn = async (ns, name) => {
      calls += 1;
      if (calls === 1) throw new BerthError('BERTH_SOURCE_FAILED', 'connection refused');
      return secret(ns, name);
    };
    const store = createTtlStore({ getObject, clock: new FakeClock(), defaultTtlMs: 60_000 });
    store.addReference('ns', 'a', 'pod');
    await assert.rejects(store.get('ns', 'a'), /connection refused/);
    assert.equal((await store.get('ns', 'a')).metadata.name, 'a');
    assert.equal(calls, 2);
  });

  test('a transient error keeps the cached copy and its age, so the next get retries', async () => {
    const clock = new FakeClock();
    let calls = 0;
    let failing = false;
    const getObject: GetObjectFn = async (ns, name) => {
      calls += 1;
      if (failing) throw new BerthError('BERTH_SOURCE_FAILED', 'timeout');
      return secret(ns, name, { metadata: { namespace: ns, name, resourceVersion: String(calls) } });
    };
    const store = createTtlStore({ getObject, clock, defaultTtlMs: 60_000 });
    store.addReference('ns', 'a', 'pod');
    assert.equal((await store.get('ns', 'a')).metadata.resourceVersion, '1');
    await clock.advance(60_000);
    failing = true;
    assert.equal((await store.get('ns', 'a')).metadata.resourceVersion, '1');
    assert.equal((await store.get('ns', 'a')).metadata.resourceVersion, '1');
    assert.equal(calls, 3); // each get past the TTL retried
    failing = false;
    assert.equal((await store.get('ns', 'a')).metadata.resourceVersion, '4');
  });

  test('a response older than the cached object is ignored', async () => {
    const versions = ['5', '3', '7'];
    const getObject: GetObjectFn = async (ns, name) =>
      secret(ns, name, { metadata: { namespace: ns, name, resourceVersion: versions.shift() ?? '0' } });
    const store = createTtlStore({ getObject, clock: new FakeClock(), defaultTtlMs: 0 });
    store.addReference('ns', 'a', 'pod');
    assert.equal((await store.get('ns', 'a')).metadata.resourceVersion, '5');
    assert.equal((await store.get('ns', 'a')).metadata.resourceVersion, '5');
    assert.equal((await store.get('ns', 'a')).metadata.resourceVersion, '7');
  });

  test('addReference invalidates: the next get fetches even within the TTL', async () => {
    const { source } = countedSecrets(['ns'], ['a']);
    const store = storeOver(source, new FakeClock(), 60_000);
    store.addReference('ns', 'a', 'pod1');
    await store.get('ns', 'a');
    await store.get('ns', 'a');
    assert.equal(source.count('get'), 1);
    store.addReference('ns', 'a', 'pod2');
    await store.get('ns', 'a');
    assert.equal(source.count('get'), 2);
  });

  test('different objects are fetched in parallel, one object once', async () => {
    const releases = new Map<string, () => void>();
    let fetches = 0;
    const getObject: GetObjectFn = (ns, name) => {
      fetches += 1;
      return new Promise((resolve) => releases.set(name, () => resolve(secret(ns, name))));
    };
    const store = createTtlStore({ getObject, clock: new FakeClock(), defaultTtlMs: 60_000 });
    store.addReference('ns', 'slow', 'pod');
    store.addReference('ns', 'fast', 'pod');
    const slow = [store.get('ns', 'slow'), store.get('ns', 'slow')];
    const fast = store.get('ns', 'fast');
    await new Promise((resolve) => setImmediate(resolve));
    releases.get('fast')?.();
    assert.equal((await fast).metadata.name, 'fast'); // not blocked behind "slow"
    releases.get('slow')?.();
    assert.deepEqual(
      (await Promise.all(slow)).map((o) => o.metadata.name),
      ['slow', 'slow'],
    );
    assert.equal(fetches, 2);
  });

  test('deleting more references than were added never goes negative', async () => {
    const { source } = countedSecrets(['ns'], ['a']);
    const store = storeOver(source, new FakeClock(), 0);
    store.deleteReference('ns', 'a', 'pod');
    store.addReference('ns', 'a', 'pod');
    store.deleteReference('ns', 'a', 'pod');
    store.deleteReference('ns', 'a', 'pod');
    assert.equal(store.references('ns', 'a'), 0);
    store.addReference('ns', 'a', 'pod');
    assert.equal(store.references('ns', 'a'), 1);
    await store.get('ns', 'a');
  });
});
