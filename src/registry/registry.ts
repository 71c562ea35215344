import {
  AsyncQueue,
  abortedError,
  BerthError,
  type Clock,
  errorCode,
  errorMessage,
  isBerthError,
  type Logger,
  type PluginEvent,
  type PluginInstanceInfo,
  type RegistryEvent,
  silentLogger,
  systemClock,
} from '../common/index.js';
import type { RegistryState, StateStorage } from '../storage/index.js';
import { copyInfo, sameDefinition } from './instance-info.js';
import type {
  PluginDispenser,
  Registry,
  RegistryOptions,
  SubscribeOptions,
  WaitForPluginOptions,
} from './types.js';
import { normalizeRegistration, requireArgument } from './validate.js';
import { nextPollDelay, WAIT_POLL_INITIAL_MS } from './wait-backoff.js';

export function createRegistry(options: RegistryOptions = {}): Registry {
  const queueSize = options.subscriberQueueSize;
  if (queueSize !== undefined) checkQueueSize(queueSize, 'subscriberQueueSize');
  return new DynamicPluginRegistry({
    storage: options.storage,
    dispensers: new Map(Object.entries(options.dispensers ?? {})),
    defaultDispenser: options.defaultDispenser,
    clock: options.clock ?? systemClock,
    logger: options.logger ?? silentLogger,
    subscriberQueueSize: queueSize,
    onEvent: options.onEvent,
  });
}

interface ResolvedOptions {
  storage: StateStorage | undefined;
  dispensers: Map<string, PluginDispenser>;
  defaultDispenser: PluginDispenser | undefined;
  clock: Clock;
  logger: Logger;
  subscriberQueueSize: number | undefined;
  onEvent: ((event: PluginEvent) => void) | undefined;
}

interface Subscriber {
  /** undefined: every type. */
  type: string | undefined;
  queue: AsyncQueue<RegistryEvent>;
}

interface Waiter {
  type: string;
  /** Re-checks the registry; settles the wait when the plugin is there. */
  check(): void;
  fail(error: BerthError): void;
}

type ChangeEvent = Extract<RegistryEvent, { type: 'registered' | 'updated' | 'deregistered' }>;

class DynamicPluginRegistry implements Registry {
  readonly #options: ResolvedOptions;
  /** type -> name -> instances, newest first. A name's list is never left empty. */
  readonly #plugins = new Map<string, Map<string, PluginInstanceInfo[]>>();
  readonly #stubs = new Map<string, PluginDispenser>();
  readonly #subscribers = new Set<Subscriber>();
  readonly #waiters = new Set<Waiter>();
  #shutDown = false;
  /** The last write failed: the next registration retries it even if nothing changed. */
  #unsaved = false;

  constructor(options: ResolvedOptions) {
    this.#options = options;
    this.#restore();
  }

  registerPlugin(info: PluginInstanceInfo): void {
    const incoming = normalizeRegistration(info);
    const byName = this.#plugins.get(incoming.type) ?? new Map<string, PluginInstanceInfo[]>();
    this.#plugins.set(incoming.type, byName);
    const list = byName.get(incoming.name) ?? [];
    byName.set(incoming.name, list);
    const at = this.#options.clock.now();
    const index = list.findIndex((entry) => entry.allocId === incoming.allocId);
    const existing = list[index];
    if (existing !== undefined) {
      if (sameDefinition(existing, incoming)) {
        // Restoring a known instance must neither reorder nor re-announce it (Nomad's rule).
        if (this.#unsaved) this.#throwIfUnsaved(this.#persist());
        return;
      }
      // nomad#11786: a changed definition replaces the entry where it stands and is announced.
      const updated = { ...incoming };
      if (existing.registeredAt !== undefined) updated.registeredAt = existing.registeredAt;
      list[index] = updated;
      this.#commit({ type: 'updated', at, plugin: copyInfo(updated), previous: copyInfo(existing) });
      return;
    }
    const entry = { ...incoming, registeredAt: at };
    list.unshift(entry);
    this.#commit({ type: 'registered', at, plugin: copyInfo(entry) });
  }

  deregisterPlugin(type: string, name: string, allocId: string): void {
    requireArgument(type, 'type', 'deregister');
    requireArgument(name, 'name', 'deregister');
    requireArgument(allocId, 'allocation ID', 'deregister');
    const byName = this.#requireType(type);
    const list = byName.get(name);
    if (list === undefined) return;
    const index = list.findIndex((entry) => entry.allocId === allocId);
    const removed = list[index];
    // Unlike upstream, a miss announces nothing: no consumer tears down an instance that is still there.
    if (removed === undefined) return;
    list.splice(index, 1);
    if (list.length === 0) byName.delete(name);
    this.#commit({ type: 'deregistered', at: this.#options.clock.now(), plugin: copyInfo(removed) });
  }

  listPlugins(type: string): PluginInstanceInfo[] | undefined {
    const byName = this.#plugins.get(type);
    if (byName === undefined) return undefined;
    const current: PluginInstanceInfo[] = [];
    for (const name of [...byName.keys()].sort()) {
      const front = byName.get(name)?.[0];
      if (front !== undefined) current.push(copyInfo(front));
    }
    return current;
  }

  listInstances(type: string, name: string): PluginInstanceInfo[] {
    return (this.#plugins.get(type)?.get(name) ?? []).map(copyInfo);
  }

  types(): string[] {
    return [...this.#plugins.keys()].sort();
  }

  async dispensePlugin(type: string, name: string): Promise<unknown> {
    requireArgument(type, 'type', 'dispense');
    requireArgument(name, 'name', 'dispense');
    const real = this.#options.dispensers.get(type) ?? this.#options.defaultDispenser;
    if (real === undefined) {
      throw new BerthError('BERTH_NO_DISPENSER', `no plugin dispenser found for type: ${type}`);
    }
    // A stub only stands in for a real dispenser (upstream checks the real one first).
    const dispenser = this.#stubs.get(type) ?? real;
    const front = this.#requireType(type).get(name)?.[0];
    if (front === undefined) {
      throw new BerthError('BERTH_PLUGIN_NOT_FOUND', `plugin ${name} for type ${type} not found`);
    }
    // Nothing is held while the dispenser runs: other calls proceed meanwhile.
    return await dispenser(copyInfo(front));
  }

  pluginForAlloc(type: string, name: string, allocId: string): PluginInstanceInfo {
    const found = this.#requireType(type)
      .get(name)
      ?.find((entry) => entry.allocId === allocId);
    if (found === undefined)
      throw new BerthError('BERTH_NO_PLUGIN_FOR_ALLOC', 'no plugin for that allocation');
    return copyInfo(found);
  }

  pluginForInstance(type: string, name: string, allocId: string): PluginInstanceInfo {
    return this.pluginForAlloc(type, name, allocId);
  }

  waitForPlugin(type: string, name: string, options: WaitForPluginOptions = {}): Promise<PluginInstanceInfo> {
    const current = this.#current(type, name);
    if (current !== undefined) return Promise.resolve(copyInfo(current));
    const { signal } = options;
    const what = `waiting for plugin ${name} of type ${type}`;
    if (signal?.aborted) return Promise.reject(abortedError(signal, what));
    if (this.#shutDown) return Promise.reject(shutDownError(what));
    const { clock } = this.#options;
    return new Promise((resolve, reject) => {
      let settled = false;
      let delay = WAIT_POLL_INITIAL_MS;
      let timer = clock.setTimeout(() => poll(), delay);
      const settle = (finish: () => void) => {
        if (settled) return;
        settled = true;
        this.#waiters.delete(waiter);
        clock.clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        finish();
      };
      const waiter: Waiter = {
        type,
        check: () => {
          const found = this.#current(type, name);
          if (found !== undefined) settle(() => resolve(copyInfo(found)));
        },
        fail: (error) => settle(() => reject(error)),
      };
      // Registry events wake the wait at once; the backoff poll is only a safety net.
      const poll = () => {
        waiter.check();
        if (settled) return;
        delay = nextPollDelay(delay);
        timer = clock.setTimeout(() => poll(), delay);
      };
      const onAbort = () => waiter.fail(abortedError(signal, what));
      this.#waiters.add(waiter);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  subscribe(type: string | undefined, options: SubscribeOptions = {}): AsyncIterable<RegistryEvent> {
    if (type !== undefined && typeof type !== 'string') {
      throw new BerthError('BERTH_INVALID_ARGUMENT', 'subscribe type must be a string or undefined');
    }
    const maxSize = options.queueSize ?? this.#options.subscriberQueueSize;
    if (maxSize !== undefined) checkQueueSize(maxSize, 'queueSize');
    const { signal } = options;
    const { clock } = this.#options;
    const onAbort = () => queue.close();
    const queue: AsyncQueue<RegistryEvent> = new AsyncQueue<RegistryEvent>({
      ...(maxSize === undefined ? {} : { maxSize }),
      lagItem: (dropped) => ({ type: 'lagged', at: clock.now(), dropped }),
      onClose: () => {
        this.#subscribers.delete(subscriber);
        signal?.removeEventListener('abort', onAbort);
      },
    });
    const subscriber: Subscriber = { type, queue };
    if (this.#shutDown || signal?.aborted) {
      queue.close();
      return queue;
    }
    this.#subscribers.add(subscriber);
    signal?.addEventListener('abort', onAbort, { once: true });
    return queue;
  }

  stubDispenserForType(type: string, dispenser: PluginDispenser | undefined): void {
    if (dispenser === undefined) this.#stubs.delete(type);
    else this.#stubs.set(type, dispenser);
  }

  shutdown(): void {
    if (this.#shutDown) return;
    this.#shutDown = true;
    for (const subscriber of [...this.#subscribers]) subscriber.queue.close();
    for (const waiter of [...this.#waiters]) waiter.fail(shutDownError('waiting for a plugin'));
  }

  #restore(): void {
    const { storage, logger, clock } = this.#options;
    if (storage === undefined) return;
    let state: RegistryState | undefined;
    try {
      state = storage.getDynamicPluginRegistryState();
    } catch (err) {
      // Upstream ignores this silently; berth starts empty but says so.
      logger.error(
        { code: errorCode(err), err: errorMessage(err) },
        'dynamic plugin registry state could not be restored; starting empty',
      );
      this.#emit(storageErrorEvent(err, clock.now()));
      return;
    }
    let instances = 0;
    for (const [type, byName] of Object.entries(state?.plugins ?? {})) {
      const names = new Map<string, PluginInstanceInfo[]>();
      for (const [name, list] of Object.entries(byName ?? {})) {
        if (!Array.isArray(list) || list.length === 0) continue;
        names.set(name, list.map(copyInfo));
        instances += list.length;
      }
      this.#plugins.set(type, names);
    }
    if (state !== undefined) {
      logger.info({ types: this.#plugins.size, instances }, 'restored dynamic plugin registry');
    }
  }

  #requireType(type: string): Map<string, PluginInstanceInfo[]> {
    const byName = this.#plugins.get(type);
    if (byName === undefined) {
      throw new BerthError('BERTH_NO_PLUGINS_FOR_TYPE', `no plugins registered for type: ${type}`);
    }
    return byName;
  }

  #current(type: string, name: string): PluginInstanceInfo | undefined {
    return this.#plugins.get(type)?.get(name)?.[0];
  }

  /** Persist first, so a published change is already durable; then tell everyone; then surface a failed write. */
  #commit(event: ChangeEvent): void {
    const failure = this.#persist();
    this.#emit(event);
    if (!this.#shutDown) {
      for (const subscriber of this.#subscribers) {
        if (subscriber.type === undefined || subscriber.type === event.plugin.type) {
          subscriber.queue.push(copyEvent(event));
        }
      }
    }
    for (const waiter of [...this.#waiters]) {
      if (waiter.type === event.plugin.type) waiter.check();
    }
    this.#throwIfUnsaved(failure);
  }

  #persist(): BerthError | undefined {
    const { storage } = this.#options;
    if (storage === undefined) return undefined;
    try {
      storage.putDynamicPluginRegistryState(this.#snapshot());
      this.#unsaved = false;
      return undefined;
    } catch (err) {
      this.#unsaved = true;
      return isBerthError(err)
        ? err
        : new BerthError(
            'BERTH_STORAGE_FAILED',
            `failed to persist dynamic plugin registry state: ${errorMessage(err)}`,
            { cause: err },
          );
    }
  }

  #throwIfUnsaved(failure: BerthError | undefined): void {
    if (failure === undefined) return;
    this.#options.logger.error(
      { code: failure.code, err: failure.message },
      'dynamic plugin registry change applied in memory but not persisted',
    );
    this.#emit(storageErrorEvent(failure, this.#options.clock.now()));
    throw failure;
  }

  #snapshot(): RegistryState {
    // Object.fromEntries defines own keys, so a type or name like "__proto__" stays data.
    return {
      plugins: Object.fromEntries(
        [...this.#plugins].map(([type, byName]) => [type, Object.fromEntries(byName)]),
      ),
    };
  }

  /** The daemon's tap; a throwing tap must not break the registry. */
  #emit(event: PluginEvent): void {
    const { onEvent, logger } = this.#options;
    if (onEvent === undefined || this.#shutDown) return;
    try {
      onEvent(event.type === 'storage-error' ? event : copyEvent(event as ChangeEvent));
    } catch (err) {
      logger.error({ err: errorMessage(err), event: event.type }, 'registry onEvent callback failed');
    }
  }
}

function copyEvent(event: ChangeEvent): ChangeEvent {
  if (event.type === 'updated') {
    return { ...event, plugin: copyInfo(event.plugin), previous: copyInfo(event.previous) };
  }
  return { ...event, plugin: copyInfo(event.plugin) };
}

function storageErrorEvent(err: unknown, at: number): PluginEvent {
  const event: PluginEvent = {
    type: 'storage-error',
    at,
    error: { code: errorCode(err), message: errorMessage(err) },
  };
  const path = isBerthError(err) ? err.details.path : undefined;
  if (typeof path === 'string') event.path = path;
  return event;
}

function shutDownError(what: string): BerthError {
  return new BerthError('BERTH_SHUT_DOWN', `${what}: the registry was shut down`);
}

function checkQueueSize(size: number, what: string): void {
  if (!Number.isInteger(size) || size < 1) {
    throw new BerthError('BERTH_INVALID_ARGUMENT', `${what} must be a positive integer, got ${size}`);
  }
}
