/**
 * The watch store behind the Watch strategy (kubelet objectCache): one
 * list/watch reflector per referenced (namespace, name), shared by every pod
 * that references it, stopped when the last reference goes.
 *
 * Upstream behaviour kept:
 * - get() records the access time BEFORE waiting for the sync, restarts an
 *   idle-stopped (non-immutable) reflector, and waits up to syncTimeoutMs (1 s)
 *   for the first list, then fails with `failed to sync <gr> cache: ...`.
 *   The wait is driven by the sync itself and by the injected clock (no polling).
 * - An absent object is NotFound; an immutable one stops its reflector and is
 *   served frozen from then on.
 * - recycleIdle() stops a reflector only if it is running, has synced, and was
 *   not read for maxIdleTime (never one whose first list is still in flight,
 *   the 1.21 regression); it runs every 60 s after start(), first immediately.
 * - stop() (upstream shutdown) stops everything; afterwards gets fail to sync,
 *   except frozen immutable items, which keep serving their copy.
 *
 * Lifecycle (common/lifecycle.ts): reflectors run from the first reference,
 * start() adds the idle recycling, stop() is memoised and resolves once every
 * reflector run has exited.
 *
 * Deliberate divergences:
 * - References are counted per pod UID and a delete from a UID that holds no
 *   reference is ignored. Upstream (1.28+) leaves refMap[uid] = -1 behind,
 *   which keeps the item (and its watch) alive forever.
 * - kubernetes#131589: an immutable object deleted and recreated under the same
 *   name would be served stale forever. Here a get of a frozen item re-checks
 *   the source with one GET at most once per immutableRecheckMs (60 s); if the
 *   uid or resourceVersion changed, or the object is gone, the frozen copy is
 *   dropped and the object is listed and watched again.
 */
import {
  type BackoffSetting,
  type Clock,
  type Lifecycle,
  LifecycleComponent,
  type Logger,
  silentLogger,
} from '../common/index.js';
import {
  cacheSyncTimeoutError,
  groupResourceOf,
  isKubeObject,
  isNotFound,
  notFoundError,
  notRegisteredError,
  unexpectedObjectTypeError,
} from './errors.js';
import { objectKeyString } from './object-key.js';
import {
  DEFAULT_IMMUTABLE_RECHECK_MS,
  DEFAULT_REFLECTOR_BACKOFF,
  DEFAULT_SYNC_TIMEOUT_MS,
  MIN_IDLE_TIME_MS,
  RECYCLE_INTERVAL_MS,
} from './objects-options.js';
import { runReflector } from './reflector.js';
import type { KubeObject, ObjectResource, ObjectSource } from './source.js';
import type { Store } from './store.js';

export interface WatchStoreOptions {
  source: ObjectSource;
  resource: ObjectResource;
  /** The name in error texts: `secret` / `configmap`. Default: derived from resource. */
  groupResource?: string;
  clock: Clock;
  /** Stop a reflector not read for this long (raised to at least 1 min). */
  maxIdleTimeMs: number;
  /** Default: `object.immutable === true`. */
  isImmutable?: (object: KubeObject) => boolean;
  /** How long a get waits for the first list. Default 1 s, as upstream. */
  syncTimeoutMs?: number;
  /** How often a frozen immutable object is re-checked on access. Default 60 s; Infinity disables. */
  immutableRecheckMs?: number;
  logger?: Logger;
  /** Delay between a reflector's failed list/watch cycles. Default DEFAULT_REFLECTOR_BACKOFF (800 ms doubling to 30 s). */
  reflectorBackoff?: BackoffSetting;
}

export interface WatchItemState {
  /** A reflector is running for the item. */
  running: boolean;
  /** The first list has completed (and the item was not stopped since, unless immutable). */
  initialized: boolean;
  /** References from all pods. */
  refs: number;
  /** References per pod UID. */
  refsByPod: Record<string, number>;
  /** The object was seen immutable and is served frozen. */
  immutable: boolean;
  /** Clock time of the last get (0 = never read). */
  lastAccess: number;
}

class WatchItem {
  readonly refMap = new Map<string, number>();
  object: KubeObject | undefined;
  initialized = false;
  lastAccess = 0;
  stopped = false;
  immutable = false;
  /** When a frozen item was last confirmed against the source. */
  lastRecheck = 0;
  recheck: Promise<void> | undefined;
  /** The current reflector run's controller; undefined when none was ever started. */
  controller: AbortController | undefined;
  /** The chain of reflector runs: a restarted run waits for the previous one to exit. */
  runs: Promise<void> = Promise.resolve();
  readonly syncWaiters = new Set<() => void>();

  constructor(
    readonly namespace: string,
    readonly name: string,
  ) {}

  get running(): boolean {
    return !this.stopped && this.controller !== undefined && !this.controller.signal.aborted;
  }

  refs(): number {
    let total = 0;
    for (const count of this.refMap.values()) total += count;
    return total;
  }
}

export class WatchStore extends LifecycleComponent implements Store, Lifecycle {
  readonly #source: ObjectSource;
  readonly #resource: ObjectResource;
  readonly #groupResource: string;
  readonly #clock: Clock;
  readonly #maxIdleTimeMs: number;
  readonly #isImmutable: (object: KubeObject) => boolean;
  readonly #syncTimeoutMs: number;
  readonly #immutableRecheckMs: number;
  readonly #logger: Logger;
  readonly #backoff: BackoffSetting;
  readonly #items = new Map<string, WatchItem>();
  #recycleTimer: ReturnType<Clock['setTimeout']> | undefined;

  constructor(options: WatchStoreOptions) {
    super();
    this.#source = options.source;
    this.#resource = options.resource;
    this.#groupResource = options.groupResource ?? groupResourceOf(options.resource);
    this.#clock = options.clock;
    this.#maxIdleTimeMs = Math.max(MIN_IDLE_TIME_MS, options.maxIdleTimeMs);
    this.#isImmutable = options.isImmutable ?? ((object) => object.immutable === true);
    this.#syncTimeoutMs = options.syncTimeoutMs ?? DEFAULT_SYNC_TIMEOUT_MS;
    this.#immutableRecheckMs = options.immutableRecheckMs ?? DEFAULT_IMMUTABLE_RECHECK_MS;
    this.#logger = (options.logger ?? silentLogger).child({
      component: 'watch-store',
      resource: options.resource,
    });
    this.#backoff = options.reflectorBackoff ?? DEFAULT_REFLECTOR_BACKOFF;
  }

  /** Starts the periodic idle recycling (first pass now, then every 60 s). */
  protected override onStart(): Promise<void> | void {
    return this.#startRecycling();
  }

  /**
   * Stops every reflector and the recycling (upstream shutdown), at once;
   * resolves when every reflector run has exited. Later gets fail to sync,
   * except frozen immutable items.
   */
  protected override onStop(): Promise<void> | void {
    return this.#shutdown();
  }

  /** Stopping or stopped: no reflector starts any more. */
  get #shutDown(): boolean {
    return this.state === 'stopping' || this.state === 'stopped';
  }

  /** The effective max idle time (after the 1 min clamp). */
  get maxIdleTimeMs(): number {
    return this.#maxIdleTimeMs;
  }

  addReference(namespace: string, name: string, podUid: string): void {
    const key = objectKeyString(namespace, name);
    let item = this.#items.get(key);
    if (item === undefined) {
      item = new WatchItem(namespace, name);
      this.#items.set(key, item);
      // After shutdown, items are still tracked but no reflector is started.
      if (!this.#shutDown) this.#startReflector(item);
    }
    item.refMap.set(podUid, (item.refMap.get(podUid) ?? 0) + 1);
  }

  deleteReference(namespace: string, name: string, podUid: string): void {
    const key = objectKeyString(namespace, name);
    const item = this.#items.get(key);
    if (item === undefined) return;
    const count = item.refMap.get(podUid);
    if (count === undefined) {
      // Divergence from upstream: never record a negative count for a UID that held no reference.
      this.#logger.debug({ namespace, name, podUid }, 'ignoring delete of a reference the pod does not hold');
      return;
    }
    if (count <= 1) item.refMap.delete(podUid);
    else item.refMap.set(podUid, count - 1);
    if (item.refMap.size === 0) {
      this.#stop(item);
      this.#items.delete(key);
    }
  }

  async get(namespace: string, name: string): Promise<KubeObject> {
    const key = objectKeyString(namespace, name);
    const item = this.#items.get(key);
    if (item === undefined) throw notRegisteredError(namespace, name);
    // Before syncing, whatever happens next: an in-flight get must never look idle.
    item.lastAccess = this.#clock.now();
    if (!this.#shutDown) {
      if (this.#dueForRecheck(item)) await this.#recheckFrozen(item);
      if (item.stopped && !item.immutable && this.#items.get(key) === item && !this.#shutDown) {
        this.#startReflector(item);
      }
    }
    if (!item.initialized) await this.#waitForSync(item);
    const object = item.object;
    if (object === undefined) throw notFoundError(this.#groupResource, name);
    if (!isKubeObject(object)) throw unexpectedObjectTypeError(object);
    if (!item.immutable && this.#isImmutable(object)) {
      item.immutable = true;
      item.lastRecheck = this.#clock.now();
      if (this.#stop(item)) {
        this.#logger.info({ namespace, name }, 'Stopped watching for changes - object is immutable');
      }
    }
    return object;
  }

  /** Stops every running, synced reflector that was not read for maxIdleTime. */
  recycleIdle(): void {
    const now = this.#clock.now();
    for (const item of this.#items.values()) {
      if (!item.stopped && item.initialized && now > item.lastAccess + this.#maxIdleTimeMs) {
        if (this.#stop(item)) {
          this.#logger.debug({ namespace: item.namespace, name: item.name }, 'stopped idle watch');
        }
      }
    }
  }

  #startRecycling(): void {
    const tick = () => {
      this.#recycleTimer = undefined;
      if (this.#shutDown) return;
      this.recycleIdle();
      this.#recycleTimer = this.#clock.setTimeout(tick, RECYCLE_INTERVAL_MS);
    };
    tick();
  }

  async #shutdown(): Promise<void> {
    if (this.#recycleTimer !== undefined) this.#clock.clearTimeout(this.#recycleTimer);
    this.#recycleTimer = undefined;
    for (const item of this.#items.values()) this.#stop(item);
    await Promise.all([...this.#items.values()].map((item) => item.runs));
  }

  itemState(namespace: string, name: string): WatchItemState | undefined {
    const item = this.#items.get(objectKeyString(namespace, name));
    if (item === undefined) return undefined;
    return {
      running: item.running,
      initialized: item.initialized,
      refs: item.refs(),
      refsByPod: Object.fromEntries(item.refMap),
      immutable: item.immutable,
      lastAccess: item.lastAccess,
    };
  }

  /** Reflectors currently running (open list/watch loops). */
  watchesOpen(): number {
    let open = 0;
    for (const item of this.#items.values()) if (item.running) open += 1;
    return open;
  }

  /** Objects currently referenced. */
  size(): number {
    return this.#items.size;
  }

  #startReflector(item: WatchItem): void {
    const controller = new AbortController();
    item.controller = controller;
    item.stopped = false;
    const signal = controller.signal;
    const sink = {
      replace: (object: KubeObject | undefined) => {
        if (signal.aborted) return;
        item.object = object;
        item.initialized = true;
        const waiters = [...item.syncWaiters];
        item.syncWaiters.clear();
        for (const wake of waiters) wake();
      },
      update: (object: KubeObject | undefined) => {
        if (!signal.aborted) item.object = object;
      },
    };
    const options = {
      source: this.#source,
      resource: this.#resource,
      namespace: item.namespace,
      name: item.name,
      sink,
      clock: this.#clock,
      logger: this.#logger,
      backoff: this.#backoff,
    };
    // Two runs never overlap: the new one starts once the previous has exited.
    item.runs = item.runs.then(() => (signal.aborted ? undefined : runReflector(options, signal)));
  }

  /** Returns true only the first time (upstream stop()). */
  #stop(item: WatchItem): boolean {
    if (item.stopped) return false;
    item.stopped = true;
    item.controller?.abort();
    // An immutable item keeps its copy: it is served frozen.
    if (!item.immutable) item.initialized = false;
    return true;
  }

  #waitForSync(item: WatchItem): Promise<void> {
    return new Promise((resolve, reject) => {
      if (item.initialized) {
        resolve();
        return;
      }
      const onSync = () => {
        this.#clock.clearTimeout(timer);
        resolve();
      };
      const timer = this.#clock.setTimeout(() => {
        item.syncWaiters.delete(onSync);
        if (item.initialized) resolve();
        else reject(cacheSyncTimeoutError(this.#groupResource));
      }, this.#syncTimeoutMs);
      item.syncWaiters.add(onSync);
    });
  }

  #dueForRecheck(item: WatchItem): boolean {
    return (
      item.immutable &&
      item.stopped &&
      item.object !== undefined &&
      this.#clock.now() >= item.lastRecheck + this.#immutableRecheckMs
    );
  }

  /** One GET for a frozen immutable item; concurrent gets share it. */
  #recheckFrozen(item: WatchItem): Promise<void> {
    if (item.recheck === undefined) {
      const recheck = this.#confirmFrozen(item);
      item.recheck = recheck;
      void recheck.finally(() => {
        if (item.recheck === recheck) item.recheck = undefined;
      });
    }
    return item.recheck;
  }

  /** Never rejects: a failed check keeps the frozen copy until the next interval. */
  async #confirmFrozen(item: WatchItem): Promise<void> {
    const { namespace, name } = item;
    try {
      let current: KubeObject | undefined;
      try {
        current = await this.#source.get(this.#resource, namespace, name);
      } catch (err) {
        if (!isNotFound(err)) throw err;
      }
      const frozen = item.object;
      if (current !== undefined && frozen !== undefined && sameObject(current, frozen)) {
        item.lastRecheck = this.#clock.now();
        return;
      }
      this.#logger.info(
        { namespace, name },
        current === undefined
          ? 'immutable object was deleted; watching it again'
          : 'immutable object was replaced; watching it again',
      );
      item.immutable = false;
      item.initialized = false;
      item.object = undefined;
    } catch (err) {
      item.lastRecheck = this.#clock.now();
      this.#logger.warn({ namespace, name, err }, 'could not re-check immutable object');
    }
  }
}

export function createWatchStore(options: WatchStoreOptions): WatchStore {
  return new WatchStore(options);
}

/** Same object identity and version: uid and resourceVersion where both sides have them. */
function sameObject(a: KubeObject, b: KubeObject): boolean {
  const { uid: uidA, resourceVersion: rvA } = a.metadata;
  const { uid: uidB, resourceVersion: rvB } = b.metadata;
  let compared = false;
  if (uidA !== undefined && uidB !== undefined) {
    if (uidA !== uidB) return false;
    compared = true;
  }
  if (rvA !== undefined && rvB !== undefined) {
    if (rvA !== rvB) return false;
    compared = true;
  }
  return compared || JSON.stringify(a) === JSON.stringify(b);
}
