import {
  AsyncQueue,
  abortedError,
  BerthError,
  backoffDelayMs,
  type ClockTimer,
  errorCode,
  errorMessage,
  isBerthError,
  LifecycleComponent,
  nextBackoffMs,
  type PluginEvent,
  type PluginInstanceInfo,
  type RegistryEvent,
} from '../common/index.js';
import type { RegistryChange, RegistryState } from '../storage/index.js';
import {
  Catalogue,
  type ChangeEvent,
  type InstanceKey,
  noPluginsForType,
  type Op,
  type Plan,
  type Settle,
} from './catalogue.js';
import { copyInfo, sameDefinition } from './instance-info.js';
import {
  checkQueueSize,
  type RegistryOptions,
  type ResolvedRegistryOptions,
  resolveRegistryOptions,
} from './registry-options.js';
import type {
  PluginDispenser,
  Registry,
  StorageHealth,
  SubscribeOptions,
  WaitForPluginOptions,
} from './types.js';
import { normalizeRegistration, requireArgument } from './validate.js';

export function createRegistry(options: RegistryOptions = {}): Registry {
  return new DynamicPluginRegistry(resolveRegistryOptions(options));
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

const instanceKey = (k: InstanceKey) => JSON.stringify([k.type, k.name, k.allocId]);

class DynamicPluginRegistry extends LifecycleComponent implements Registry {
  readonly #options: ResolvedRegistryOptions;
  /** Durable state: what landed in the storage (catalogue.ts). */
  readonly #catalogue = new Catalogue();
  readonly #stubs = new Map<string, PluginDispenser>();
  readonly #subscribers = new Set<Subscriber>();
  readonly #waiters = new Set<Waiter>();
  /** Changes waiting for the next transaction. */
  #queue: Op[] = [];
  /** The commit loop, while it runs (at most one: transactions are serialised). */
  #loop: Promise<void> | undefined;
  /** A retry of the failing storage is due (run by the commit loop). */
  #retryWanted = false;
  #retryTimer: ClockTimer | undefined;
  #retryAt: number | undefined;
  /** Deregistrations already hidden from reads whose delete has not landed yet. */
  readonly #pendingDeletes = new Map<string, InstanceKey>();
  /** Every failed write so far (a counter for metrics). */
  #failures = 0;
  /** Failed writes since the last one that landed (drives the retry backoff). */
  #consecutiveFailures = 0;
  #failingSince: number | undefined;
  #lastError: BerthError | undefined;
  /** False once stop began: later changes are refused. */
  #accepting = true;
  /** True once stop finished draining: nothing is published any more. */
  #closed = false;
  /** The storage's state was read (at construction or start). */
  #restored = false;
  /** The storage was re-created empty: the next commit writes the whole state back first. */
  #rewriteWanted = false;

  constructor(options: ResolvedRegistryOptions) {
    super();
    this.#options = options;
    options.storage?.onRecreated?.((error) => this.#storageRecreated(error));
    // A storage that is already open is read at once, so the registry is readable from construction.
    if (options.storage?.state === 'running') this.#restore();
  }

  protected override onStart(): Promise<void> | void {
    return this.#onStart();
  }

  protected override onStop(): Promise<void> | void {
    return this.#onStop();
  }

  registerPlugin(info: PluginInstanceInfo): Promise<void> {
    const incoming = normalizeRegistration(info);
    // Restoring a known instance must neither reorder nor re-announce it (Nomad's rule), nor write.
    if (this.#accepting && this.#queue.length === 0 && this.#loop === undefined) {
      const existing = this.#catalogue.find(incoming);
      if (existing !== undefined && sameDefinition(existing, incoming)) return Promise.resolve();
    }
    return this.#enqueue((settle) => ({ kind: 'register', info: incoming, ...settle }));
  }

  deregisterPlugin(type: string, name: string, allocId: string): Promise<void> {
    requireArgument(type, 'type', 'deregister');
    requireArgument(name, 'name', 'deregister');
    requireArgument(allocId, 'allocation ID', 'deregister');
    return this.#enqueue((settle) => ({ kind: 'deregister', type, name, allocId, ...settle }));
  }

  listPlugins(type: string): PluginInstanceInfo[] | undefined {
    return this.#catalogue.list(type);
  }

  listInstances(type: string, name: string): PluginInstanceInfo[] {
    return this.#catalogue.instances(type, name);
  }

  types(): string[] {
    return this.#catalogue.types();
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
    const front = this.#catalogue.requireType(type).get(name)?.[0];
    if (front === undefined) {
      throw new BerthError('BERTH_PLUGIN_NOT_FOUND', `plugin ${name} for type ${type} not found`);
    }
    // Nothing is held while the dispenser runs: other calls proceed meanwhile.
    return await dispenser(copyInfo(front));
  }

  pluginForAlloc(type: string, name: string, allocId: string): PluginInstanceInfo {
    const found = this.#catalogue
      .requireType(type)
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
    const current = this.#catalogue.current(type, name);
    if (current !== undefined) return Promise.resolve(copyInfo(current));
    const { signal } = options;
    const what = `waiting for plugin ${name} of type ${type}`;
    if (signal?.aborted) return Promise.reject(abortedError(signal, what));
    if (!this.#accepting) return Promise.reject(shutDownError(what));
    const { clock, waitPoll } = this.#options;
    return new Promise((resolve, reject) => {
      let settled = false;
      let delay = 0;
      let timer: ClockTimer | undefined;
      const settle = (finish: () => void) => {
        if (settled) return;
        settled = true;
        this.#waiters.delete(waiter);
        if (timer !== undefined) clock.clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        finish();
      };
      const waiter: Waiter = {
        type,
        check: () => {
          const found = this.#catalogue.current(type, name);
          if (found !== undefined) settle(() => resolve(copyInfo(found)));
        },
        fail: (error) => settle(() => reject(error)),
      };
      // Registry events wake the wait at once; the backoff poll is only a safety net.
      const schedule = () => {
        if (waitPoll === false) return;
        delay = nextBackoffMs(waitPoll, delay);
        timer = clock.setTimeout(() => poll(), delay);
      };
      const poll = () => {
        waiter.check();
        if (!settled) schedule();
      };
      const onAbort = () => waiter.fail(abortedError(signal, what));
      this.#waiters.add(waiter);
      signal?.addEventListener('abort', onAbort, { once: true });
      schedule();
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
    if (this.#closed || signal?.aborted) {
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

  storageHealth(): StorageHealth {
    const failures = this.#failures;
    const lastError = this.#lastError;
    if (this.#failingSince === undefined || lastError === undefined) return { state: 'ok', failures };
    const health: StorageHealth = {
      state: 'failing',
      failures,
      since: this.#failingSince,
      lastError: { code: lastError.code, message: lastError.message },
      pendingDeletes: this.#pendingDeletes.size,
    };
    if (this.#retryAt !== undefined) health.retryAt = this.#retryAt;
    return health;
  }

  async #onStart(): Promise<void> {
    if (this.#restored) return;
    await this.#options.storage?.start();
    this.#restore();
  }

  async #onStop(): Promise<void> {
    this.#accepting = false;
    this.#cancelRetry();
    // Changes accepted before the stop are finished, so their callers get a real answer.
    while (this.#loop !== undefined) await this.#loop;
    this.#closed = true;
    for (const subscriber of [...this.#subscribers]) subscriber.queue.close();
    for (const waiter of [...this.#waiters]) waiter.fail(shutDownError('waiting for a plugin'));
    if (this.#pendingDeletes.size > 0) {
      this.#options.logger.warn(
        { pendingDeletes: this.#pendingDeletes.size },
        'stopped with deregistrations not yet persisted; they are restored on the next start and removed again once their sockets are found gone',
      );
    }
  }

  #enqueue(build: (settle: Settle) => Op): Promise<void> {
    if (!this.#accepting) return Promise.reject(shutDownError('changing the registry'));
    // The first change starts a registry nobody started (start is idempotent).
    if (this.state === 'new') this.start().catch(() => undefined);
    const at = this.#options.clock.now();
    return new Promise<void>((resolve, reject) => {
      this.#queue.push(build({ at, resolve, reject }));
      this.#kick();
    });
  }

  /** Runs the commit loop unless it is running; it takes everything queued meanwhile as the next batch. */
  #kick(): void {
    if (this.#loop !== undefined) return;
    this.#loop = this.#runLoop().finally(() => {
      this.#loop = undefined;
      if (this.#queue.length > 0 || this.#retryWanted || this.#rewriteDue()) this.#kick();
    });
  }

  async #runLoop(): Promise<void> {
    try {
      // Also lets every change made in the current tick join the first batch.
      await this.start();
    } catch (err) {
      for (const op of this.#queue.splice(0)) op.reject(err);
      return;
    }
    while (this.#queue.length > 0 || this.#retryWanted || this.#rewriteDue()) {
      this.#retryWanted = false;
      await this.#commit(this.#queue.splice(0, this.#options.maxBatch));
    }
  }

  /** One transaction: the retried deletes first, then the batch; applied in memory only once durable. */
  async #commit(ops: Op[]): Promise<void> {
    const plan = this.#catalogue.plan(ops);
    const { storage } = this.#options;
    const retried = [...this.#pendingDeletes.values()];
    const changes: RegistryChange[] = [
      ...retried.map((k) => ({ op: 'delete' as const, ...k })),
      ...plan.changes,
    ];
    const failing = this.#failingSince !== undefined;
    // An empty batch is written only as a probe of a failing storage.
    if (storage !== undefined && (changes.length > 0 || failing || this.#rewriteWanted)) {
      try {
        if (this.#rewriteWanted) {
          // What is in memory is the truth: it is written back whole (without this batch, which follows).
          storage.putDynamicPluginRegistryState(this.#catalogue.snapshot());
          this.#rewriteWanted = false;
        }
        await storage.applyChanges(changes);
      } catch (err) {
        this.#writeFailed(err, ops);
        return;
      }
      for (const key of retried) this.#pendingDeletes.delete(instanceKey(key));
      if (failing) this.#recovered();
    }
    this.#apply(plan);
  }

  /** Makes a durable batch visible, then announces it in order and answers its callers. */
  #apply(plan: Plan): void {
    this.#catalogue.apply(plan);
    for (const { op, event, error } of plan.outcomes) {
      if (error !== undefined) {
        op.reject(error);
        continue;
      }
      if (event !== undefined) this.#publish(event);
      op.resolve();
    }
  }

  /**
   * Nothing of the batch is applied, except deregistrations: those are hidden
   * and announced anyway (their socket is gone), and their deletes stay pending
   * until a write lands. Registrations are refused with the storage error.
   */
  #writeFailed(err: unknown, ops: Op[]): void {
    const { clock, logger } = this.#options;
    const error = BerthError.from(
      err,
      'BERTH_STORAGE_FAILED',
      'failed to persist dynamic plugin registry changes',
    );
    this.#failures += 1;
    this.#consecutiveFailures += 1;
    this.#failingSince ??= clock.now();
    this.#lastError = error;
    logger.error(
      { code: error.code, err: error.message, failures: this.#failures },
      'dynamic plugin registry change could not be persisted; registrations in it were refused',
    );
    this.#emit(storageErrorEvent(error, clock.now()));
    for (const op of ops) {
      if (op.kind === 'register') {
        const existing = this.#catalogue.find(op.info);
        if (existing !== undefined && sameDefinition(existing, op.info)) op.resolve();
        else op.reject(error);
        continue;
      }
      if (!this.#catalogue.has(op.type)) {
        op.reject(noPluginsForType(op.type));
        continue;
      }
      const removed = this.#catalogue.hide(op);
      if (removed !== undefined) {
        this.#pendingDeletes.set(instanceKey(op), { type: op.type, name: op.name, allocId: op.allocId });
        this.#publish({ type: 'deregistered', at: op.at, plugin: copyInfo(removed) });
      }
      op.resolve();
    }
    this.#scheduleRetry();
  }

  #scheduleRetry(): void {
    const { storageRetry, clock } = this.#options;
    if (!this.#accepting || this.#retryTimer !== undefined || storageRetry === false) return;
    const delay = backoffDelayMs(storageRetry, this.#consecutiveFailures);
    this.#retryAt = clock.now() + delay;
    this.#retryTimer = clock.setTimeout(() => {
      this.#retryTimer = undefined;
      this.#retryAt = undefined;
      if (!this.#accepting) return;
      this.#retryWanted = true;
      this.#kick();
    }, delay);
  }

  #cancelRetry(): void {
    if (this.#retryTimer !== undefined) this.#options.clock.clearTimeout(this.#retryTimer);
    this.#retryTimer = undefined;
    this.#retryAt = undefined;
  }

  #recovered(): void {
    const { logger, onStorageRecovered } = this.#options;
    logger.info(
      { failures: this.#consecutiveFailures, since: this.#failingSince },
      'dynamic plugin registry storage works again',
    );
    this.#consecutiveFailures = 0;
    this.#failingSince = undefined;
    this.#lastError = undefined;
    this.#cancelRetry();
    try {
      onStorageRecovered?.();
    } catch (err) {
      logger.error({ err: errorMessage(err) }, 'onStorageRecovered callback failed');
    }
  }

  /** Marks the storage failing without a failed batch (read-only at start); the probe loop takes over. */
  #markFailing(error: BerthError): void {
    const { clock, logger } = this.#options;
    this.#failures += 1;
    this.#consecutiveFailures += 1;
    this.#failingSince ??= clock.now();
    this.#lastError = error;
    logger.error(
      { code: error.code, err: error.message },
      'dynamic plugin registry changes cannot be persisted',
    );
    this.#emit(storageErrorEvent(error, clock.now()));
    this.#scheduleRetry();
  }

  /** The storage lost its file and made an empty one: write everything back, now. */
  #storageRecreated(error: BerthError): void {
    if (!this.#accepting) return;
    this.#options.logger.warn({ code: error.code, err: error.message }, 'rewriting the registry state');
    this.#emit(storageErrorEvent(error, this.#options.clock.now()));
    this.#rewriteWanted = true;
    this.#kick();
  }

  /** A rewrite runs at once unless the storage is failing (then the retry timer brings it). */
  #rewriteDue(): boolean {
    return this.#rewriteWanted && this.#failingSince === undefined;
  }

  #publish(event: ChangeEvent): void {
    this.#emit(event);
    if (!this.#closed) {
      for (const subscriber of this.#subscribers) {
        if (subscriber.type === undefined || subscriber.type === event.plugin.type) {
          subscriber.queue.push(copyEvent(event));
        }
      }
    }
    for (const waiter of [...this.#waiters]) {
      if (waiter.type === event.plugin.type) waiter.check();
    }
  }

  #restore(): void {
    const { storage, logger, clock } = this.#options;
    this.#restored = true;
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
    const instances = this.#catalogue.load(state);
    if (state !== undefined) {
      logger.info({ types: this.#catalogue.typeCount, instances }, 'restored dynamic plugin registry');
    }
    // Opened read-only (a full disk): what was read is listed, writes are refused until a probe lands.
    if (storage.readOnly !== undefined) this.#markFailing(storage.readOnly);
  }

  /** The daemon's tap; a throwing tap must not break the registry. */
  #emit(event: PluginEvent): void {
    const { onEvent, logger } = this.#options;
    if (onEvent === undefined || this.#closed) return;
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
  return new BerthError('BERTH_SHUT_DOWN', `${what}: the registry was stopped`);
}
