/**
 * The heart of the in-process sources (memory, directory): objects per
 * resource with a source-wide, monotonically increasing resourceVersion, a
 * bounded event history so a watch can resume from a list's version, and live
 * watch streams. It behaves like a tiny apiserver: a watch from a version the
 * history no longer covers fails with BERTH_RESOURCE_VERSION_TOO_OLD and the
 * caller re-lists.
 */
import { randomUUID } from 'node:crypto';
import { AsyncQueue, BerthError } from '../../common/index.js';
import { groupResourceOf, notFoundError } from '../errors.js';
import { objectKeyString } from '../object-key.js';
import type {
  GetOptions,
  KubeObject,
  ListOptions,
  ObjectList,
  ObjectResource,
  WatchEvent,
  WatchOptions,
} from '../source.js';

export interface VersionedStoreOptions {
  /** Most events kept for resuming watches. Default 1000. */
  historyLimit?: number;
  /** Assign a random metadata.uid to objects that arrive without one (like the apiserver on create). */
  assignUids?: boolean;
}

interface HistoryEntry {
  resourceVersion: number;
  resource: ObjectResource;
  event: { type: 'ADDED' | 'MODIFIED' | 'DELETED'; object: KubeObject };
}

interface Watcher {
  resource: ObjectResource;
  namespace: string;
  name: string | undefined;
  queue: AsyncQueue<WatchEvent>;
}

export class VersionedStore {
  readonly #historyLimit: number;
  readonly #assignUids: boolean;
  readonly #objects = new Map<ObjectResource, Map<string, KubeObject>>();
  readonly #history: HistoryEntry[] = [];
  readonly #watchers = new Set<Watcher>();
  #revision = 0;
  /** Events at or below this version are gone from the history. */
  #compactedRevision = 0;
  #closed = false;

  constructor(options: VersionedStoreOptions = {}) {
    this.#historyLimit = Math.max(1, options.historyLimit ?? 1000);
    this.#assignUids = options.assignUids ?? true;
  }

  /** The newest resourceVersion handed out (as a string, like Kubernetes). */
  get resourceVersion(): string {
    return String(this.#revision);
  }

  get watcherCount(): number {
    return this.#watchers.size;
  }

  /** Creates or replaces an object; returns the stored copy with its new resourceVersion. */
  put(resource: ObjectResource, object: KubeObject): KubeObject {
    this.#assertOpen();
    const namespace = object.metadata.namespace ?? '';
    const key = objectKeyString(namespace, object.metadata.name);
    const byKey = this.#resourceMap(resource);
    const previous = byKey.get(key);
    this.#revision += 1;
    const stored = structuredClone(object);
    stored.metadata.namespace = namespace;
    stored.metadata.resourceVersion = String(this.#revision);
    if (stored.metadata.uid === undefined) {
      // An update keeps the object's identity; a create gets a new one.
      const uid = previous?.metadata.uid ?? (this.#assignUids ? randomUUID() : undefined);
      if (uid !== undefined) stored.metadata.uid = uid;
    }
    byKey.set(key, stored);
    this.#record(resource, { type: previous === undefined ? 'ADDED' : 'MODIFIED', object: stored });
    return structuredClone(stored);
  }

  /** Deletes an object; returns false when it did not exist (no event then). */
  remove(resource: ObjectResource, namespace: string, name: string): boolean {
    this.#assertOpen();
    const byKey = this.#resourceMap(resource);
    const key = objectKeyString(namespace, name);
    const previous = byKey.get(key);
    if (previous === undefined) return false;
    byKey.delete(key);
    this.#revision += 1;
    const tombstone = structuredClone(previous);
    tombstone.metadata.resourceVersion = String(this.#revision);
    this.#record(resource, { type: 'DELETED', object: tombstone });
    return true;
  }

  /** The current object or undefined (no copy: internal use by sources that compare). */
  peek(resource: ObjectResource, namespace: string, name: string): KubeObject | undefined {
    return this.#resourceMap(resource).get(objectKeyString(namespace, name));
  }

  /** Every (namespace, name) currently held for a resource. */
  keys(resource: ObjectResource): Array<{ namespace: string; name: string }> {
    return [...this.#resourceMap(resource).values()].map((o) => ({
      namespace: o.metadata.namespace ?? '',
      name: o.metadata.name,
    }));
  }

  /** Forgets the whole event history: watches from any older version must re-list. */
  compact(): void {
    this.#history.length = 0;
    this.#compactedRevision = this.#revision;
  }

  /** Sends a BOOKMARK at the current version to every open watch. */
  bookmark(): void {
    for (const w of this.#watchers) w.queue.push({ type: 'BOOKMARK', resourceVersion: this.resourceVersion });
  }

  /** Ends every open watch stream normally, as an apiserver closing its watches would. */
  disconnectWatchers(): void {
    for (const w of [...this.#watchers]) w.queue.close();
  }

  async get(
    resource: ObjectResource,
    namespace: string,
    name: string,
    options: GetOptions = {},
  ): Promise<KubeObject> {
    this.#assertOpen();
    options.signal?.throwIfAborted();
    const found = this.peek(resource, namespace, name);
    if (found === undefined) throw notFoundError(groupResourceOf(resource), name);
    return structuredClone(found);
  }

  async list(resource: ObjectResource, namespace: string, options: ListOptions = {}): Promise<ObjectList> {
    this.#assertOpen();
    options.signal?.throwIfAborted();
    const items: KubeObject[] = [];
    for (const o of this.#resourceMap(resource).values()) {
      if (matches(o, namespace, options.name)) items.push(structuredClone(o));
    }
    return { items, resourceVersion: this.resourceVersion };
  }

  watch(resource: ObjectResource, namespace: string, options: WatchOptions): AsyncIterable<WatchEvent> {
    return this.#watch(resource, namespace, options);
  }

  /** Ends every watch and refuses further calls. Idempotent. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.disconnectWatchers();
  }

  async *#watch(
    resource: ObjectResource,
    namespace: string,
    options: WatchOptions,
  ): AsyncGenerator<WatchEvent> {
    this.#assertOpen();
    if (options.signal.aborted) return;
    const from = parseVersion(options.resourceVersion);
    const queue = new AsyncQueue<WatchEvent>();
    const watcher: Watcher = { resource, namespace, name: options.name, queue };
    // Registration and replay happen in one synchronous step, so no event
    // between the caller's list and this watch can fall in a gap.
    if (from === undefined) {
      // "0" or "": start with the current state, as Kubernetes does for a watch without a version.
      for (const o of this.#resourceMap(resource).values()) {
        if (matches(o, namespace, options.name)) queue.push({ type: 'ADDED', object: structuredClone(o) });
      }
    } else {
      if (from < this.#compactedRevision) {
        throw new BerthError(
          'BERTH_RESOURCE_VERSION_TOO_OLD',
          `too old resource version: ${from} (${this.#compactedRevision})`,
          { details: { resourceVersion: options.resourceVersion, oldest: this.#compactedRevision } },
        );
      }
      for (const entry of this.#history) {
        if (entry.resourceVersion > from && entry.resource === resource) {
          if (matches(entry.event.object, namespace, options.name)) queue.push(copyEvent(entry.event));
        }
      }
    }
    this.#watchers.add(watcher);
    const onAbort = () => queue.close();
    options.signal.addEventListener('abort', onAbort, { once: true });
    try {
      for await (const event of queue) yield event;
    } finally {
      options.signal.removeEventListener('abort', onAbort);
      this.#watchers.delete(watcher);
      queue.close();
    }
  }

  #record(resource: ObjectResource, event: HistoryEntry['event']): void {
    this.#history.push({ resourceVersion: this.#revision, resource, event });
    while (this.#history.length > this.#historyLimit) {
      const dropped = this.#history.shift();
      if (dropped) this.#compactedRevision = dropped.resourceVersion;
    }
    for (const w of this.#watchers) {
      if (w.resource === resource && matches(event.object, w.namespace, w.name))
        w.queue.push(copyEvent(event));
    }
  }

  #resourceMap(resource: ObjectResource): Map<string, KubeObject> {
    let byKey = this.#objects.get(resource);
    if (byKey === undefined) {
      byKey = new Map();
      this.#objects.set(resource, byKey);
    }
    return byKey;
  }

  #assertOpen(): void {
    if (this.#closed) throw new BerthError('BERTH_SHUT_DOWN', 'object source is closed');
  }
}

function matches(object: KubeObject, namespace: string, name: string | undefined): boolean {
  return (
    (object.metadata.namespace ?? '') === namespace && (name === undefined || object.metadata.name === name)
  );
}

function copyEvent(event: HistoryEntry['event']): WatchEvent {
  return { type: event.type, object: structuredClone(event.object) };
}

/** undefined for "" and "0" (= from the current state); a BerthError for garbage. */
function parseVersion(value: string): number | undefined {
  if (value === '' || value === '0') return undefined;
  if (!/^\d+$/.test(value)) {
    throw new BerthError(
      'BERTH_INVALID_ARGUMENT',
      `watch resourceVersion must be a decimal number, got ${JSON.stringify(value)}`,
    );
  }
  return Number(value);
}
