/**
 * The TTL store behind the Cache strategy (kubelet objectStore): objects are
 * fetched with a GET on first read and refetched once their TTL has passed.
 *
 * - addReference counts and invalidates (the next get fetches even within the TTL);
 *   deleteReference forgets the object at zero; neither calls the source.
 * - Fresh means `now < lastUpdate + ttl` (an age equal to the TTL is stale; TTL 0 never fresh).
 * - A cached error (NotFound included) is always refetched.
 * - With a good object cached the refetch asks for resourceVersion "0" (any cached copy will do).
 * - A transient error with nothing cached is returned and not cached; with something cached it
 *   is ignored and the cached copy is returned (the next get retries).
 * - NotFound is cached together with the object the source returned alongside it, if any.
 * - A response older than the cached object (smaller resourceVersion) is ignored.
 * - Concurrent gets of one object share one fetch; different objects fetch in parallel.
 */
import type { Clock } from '../common/index.js';
import { isNotFound, notRegisteredError, objectOfNotFound } from './errors.js';
import { Mutex } from './mutex.js';
import type { GetTtl } from './node-ttl.js';
import { objectKeyString } from './object-key.js';
import { DEFAULT_OBJECT_TTL_MS } from './objects-options.js';
import type { GetOptions, KubeObject } from './source.js';
import type { Store } from './store.js';

export type GetObjectFn = (namespace: string, name: string, options: GetOptions) => Promise<KubeObject>;

export interface TtlStoreOptions {
  getObject: GetObjectFn;
  clock: Clock;
  /** Consulted on every freshness check; undefined (or not given) means use defaultTtlMs. */
  getTtl?: GetTtl;
  defaultTtlMs?: number;
}

export interface TtlStore extends Store {
  /** References held for an object (0 when unknown). For tests and metrics. */
  references(namespace: string, name: string): number;
  /** Objects currently referenced. */
  size(): number;
}

interface ObjectData {
  readonly mutex: Mutex;
  object: KubeObject | undefined;
  error: unknown;
  /** undefined until the first stored fetch: an empty entry is always stale. */
  lastUpdate: number | undefined;
}

interface Item {
  refCount: number;
  /** undefined = invalidated; the next get starts from an empty entry. */
  data: ObjectData | undefined;
}

export function createTtlStore(options: TtlStoreOptions): TtlStore {
  const { getObject, clock } = options;
  const getTtl = options.getTtl;
  const defaultTtlMs = options.defaultTtlMs ?? DEFAULT_OBJECT_TTL_MS;
  const items = new Map<string, Item>();

  const ttlMs = async (): Promise<number> => {
    if (getTtl === undefined) return defaultTtlMs;
    try {
      return (await getTtl())?.ttlMs ?? defaultTtlMs;
    } catch {
      return defaultTtlMs;
    }
  };

  const isFresh = async (data: ObjectData): Promise<boolean> => {
    if (data.lastUpdate === undefined) return false;
    return clock.now() < data.lastUpdate + (await ttlMs());
  };

  const refresh = async (namespace: string, name: string, data: ObjectData): Promise<KubeObject> => {
    if (data.error !== undefined || !(await isFresh(data))) {
      // A good cached object makes this a periodic refresh that any cached copy may answer.
      const getOptions: GetOptions =
        data.object !== undefined && data.error === undefined ? { resourceVersion: '0' } : {};
      let fetched: KubeObject | undefined;
      let error: unknown;
      try {
        fetched = await getObject(namespace, name, getOptions);
      } catch (err) {
        error = err ?? new Error('object source failed without an error');
        fetched = objectOfNotFound(err);
      }
      const notFound = error !== undefined && isNotFound(error);
      if (error !== undefined && !notFound && data.object === undefined && data.error === undefined) {
        // Nothing cached to fall back on: report the failure without caching it.
        throw error;
      }
      if ((error === undefined && !isOlder(fetched, data.object)) || notFound) {
        data.object = fetched;
        data.error = error;
        data.lastUpdate = clock.now();
      }
      // Otherwise (transient error or stale response) keep the cache and its time: the next get retries.
    }
    if (data.error !== undefined) throw data.error;
    if (data.object === undefined) throw new Error(`object store entry for ${namespace}/${name} is empty`);
    return data.object;
  };

  return {
    addReference(namespace, name) {
      const key = objectKeyString(namespace, name);
      let item = items.get(key);
      if (item === undefined) {
        item = { refCount: 0, data: undefined };
        items.set(key, item);
      }
      item.refCount += 1;
      // Invalidate: a (re)registered pod must see a fresh copy, not one up to a TTL old.
      item.data = undefined;
    },

    deleteReference(namespace, name) {
      const key = objectKeyString(namespace, name);
      const item = items.get(key);
      if (item === undefined) return;
      item.refCount -= 1;
      if (item.refCount <= 0) items.delete(key);
    },

    async get(namespace, name) {
      const item = items.get(objectKeyString(namespace, name));
      if (item === undefined) throw notRegisteredError(namespace, name);
      if (item.data === undefined) {
        item.data = { mutex: new Mutex(), object: undefined, error: undefined, lastUpdate: undefined };
      }
      const data = item.data;
      return data.mutex.run(() => refresh(namespace, name, data));
    },

    references: (namespace, name) => items.get(objectKeyString(namespace, name))?.refCount ?? 0,
    size: () => items.size,
  };
}

/** True when `next` has a smaller resourceVersion than `current` (unparsable counts as 0). */
function isOlder(next: KubeObject | undefined, current: KubeObject | undefined): boolean {
  if (next === undefined || current === undefined) return false;
  return parseVersion(next.metadata.resourceVersion) < parseVersion(current.metadata.resourceVersion);
}

function parseVersion(value: string | undefined): bigint {
  if (value === undefined || !/^\d+$/.test(value)) return 0n;
  const parsed = BigInt(value);
  return parsed > 18446744073709551615n ? 0n : parsed;
}
