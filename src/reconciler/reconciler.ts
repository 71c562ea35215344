import type { ActualStateOfWorld, DesiredStateOfWorld, PluginInfo } from '../cache/types.js';
import {
  BerthError,
  type BerthErrorCode,
  type Clock,
  type ClockTimer,
  type Lifecycle,
  LifecycleComponent,
  type Logger,
  TurnBudget,
  WORK_SLICE_MS,
} from '../common/index.js';
import type { OperationEvent, OperationExecutor, RunRefusal } from '../executor/index.js';
import type { PluginHandler } from '../handlers/types.js';
import { DEFAULT_RECONCILER_OPTIONS } from './reconciler-options.js';

/** What the reconciler needs from the handler table (src/handlers HandlerTable satisfies it). */
export interface ReconcilerHandlers {
  get(type: string): PluginHandler | undefined;
  /** Called with the type whenever a handler is added; returns an unsubscribe function. */
  onAdded(listener: (type: string) => void): () => void;
}

/** The state lookups the incremental path needs (the cache stores provide `get`). */
interface Lookup {
  get?(socketPath: string): PluginInfo | undefined;
  /** Visits every entry without copying it (the cache stores provide it). */
  each?(visit: (info: Readonly<PluginInfo>) => void): void;
}

export interface ReconcilerOptions {
  desiredState: DesiredStateOfWorld & Lookup;
  actualState: ActualStateOfWorld & Lookup;
  executor: OperationExecutor;
  handlers: ReconcilerHandlers;
  clock: Clock;
  logger: Logger;
  /** Safety-net full pass period (default 10 s); every change also wakes its own socket path. */
  resyncPeriodMs?: number;
  /** @internal The event-loop turn shared with the pipeline's other parts (default: one of its own). */
  turn?: TurnBudget;
}

/** A register/unregister the reconciler wanted but the executor refused (pending or in backoff). */
export interface Refusal {
  operation: 'register' | 'unregister';
  code: BerthErrorCode;
  /** The upstream refusal text (built when read). */
  readonly message: string;
  at: number;
  /** For a backoff refusal: when a retry is permitted (strictly after). */
  retryAt?: number;
}

export interface Reconciler extends Lifecycle {
  /** Subscribes to its wake-up sources and runs a first full pass. Aborting `signal` stops it. */
  start(signal?: AbortSignal): Promise<void>;
  /** Idempotent and memoised. Does not stop the executor (its owner does). */
  stop(): Promise<void>;
  /** Asks for a full pass soon; many calls in one tick coalesce into one pass. */
  wake(): void;
  /** One full pass, now: unregister what should go, then register what should come. */
  reconcile(): void;
  /** The last refusal per socket path, for visibility (kubernetes#138171). */
  refusals(): ReadonlyMap<string, Refusal>;
  /**
   * Ends the backoff of every socket whose last failure `matches` and wakes
   * a pass, so they are retried now (e.g. once the storage works again).
   * Returns how many were reset.
   */
  retryFailed(matches: (error: BerthError) => boolean): number;
}

export function createReconciler(options: ReconcilerOptions): Reconciler {
  const resync = options.resyncPeriodMs ?? DEFAULT_RECONCILER_OPTIONS.resyncPeriodMs;
  if (!Number.isFinite(resync) || resync <= 0) {
    throw new BerthError(
      'BERTH_INVALID_ARGUMENT',
      `reconciler: resyncPeriodMs must be a positive number of milliseconds, got ${String(options.resyncPeriodMs)}`,
    );
  }
  return new IncrementalReconciler(options, resync);
}

/**
 * The kubelet reconciler, made incremental. Upstream walks every desired and
 * actual plugin each second; berth keeps a set of dirty socket paths and, on
 * the next turn of the event loop, looks at those paths only. A path is
 * dirtied by its desired-state change, by its operation settling (a register
 * refused because the path's unregister was running goes right after it), and
 * by its backoff deadline (one timer per path, so a socket in backoff costs
 * nothing until then). A full pass runs only at start, when a handler is added
 * (plugins refused for lack of it retry at once), on wake(), and on the
 * resync period as a safety net. Refusals are values, not exceptions, so a
 * storm of refusals costs no stack traces.
 */
class IncrementalReconciler extends LifecycleComponent implements Reconciler {
  readonly #dsw: DesiredStateOfWorld & Lookup;
  readonly #asw: ActualStateOfWorld & Lookup;
  readonly #executor: OperationExecutor;
  readonly #handlers: ReconcilerHandlers;
  readonly #clock: Clock;
  readonly #logger: Logger;
  readonly #resyncPeriodMs: number;
  readonly #refusals = new Map<string, Refusal>();
  readonly #retryTimers = new Map<string, ClockTimer>();
  readonly #unsubscribe: Array<() => void> = [];
  readonly #dirty = new Set<string>();
  readonly #turn: TurnBudget;
  #fullPassWanted = false;
  #flushScheduled = false;
  #resyncTimer: ClockTimer | undefined;
  readonly #getHandler = (type: string) => this.#handlers.get(type);

  constructor(options: ReconcilerOptions, resyncPeriodMs: number) {
    super();
    this.#dsw = options.desiredState;
    this.#asw = options.actualState;
    this.#executor = options.executor;
    this.#handlers = options.handlers;
    this.#clock = options.clock;
    this.#logger = options.logger;
    this.#resyncPeriodMs = resyncPeriodMs;
    this.#turn = options.turn ?? new TurnBudget(WORK_SLICE_MS);
  }

  protected override onStart(): Promise<void> | void {
    this.#unsubscribe.push(
      this.#dsw.onChange((socketPath) => this.#touch(socketPath)),
      this.#handlers.onAdded((type) => this.#onHandlerAdded(type)),
      this.#executor.addListener((event) => this.#onOperationSettled(event)),
    );
    // Running from here on, so the first pass may start work.
    this.#running = true;
    this.reconcile();
  }

  protected override onStop(): Promise<void> | void {
    this.#running = false;
    for (const off of this.#unsubscribe.splice(0)) off();
    if (this.#resyncTimer) this.#clock.clearTimeout(this.#resyncTimer);
    this.#resyncTimer = undefined;
    for (const timer of this.#retryTimers.values()) this.#clock.clearTimeout(timer);
    this.#retryTimers.clear();
    this.#dirty.clear();
  }

  #running = false;

  wake(): void {
    if (!this.#running) return;
    this.#fullPassWanted = true;
    this.#scheduleFlush();
  }

  refusals(): ReadonlyMap<string, Refusal> {
    return this.#refusals;
  }

  reconcile(): void {
    if (!this.#running) return;
    this.#fullPassWanted = false;
    this.#dirty.clear();
    this.#scheduleResync();
    const desired = this.#entries(this.#dsw);
    const registered = this.#entries(this.#asw);

    // Unregistrations first: gone from the desired state, or replaced by a new generation.
    for (const actual of registered.values()) {
      const wanted = desired.get(actual.socketPath);
      if (wanted !== undefined && wanted.uuid === actual.uuid) continue;
      const copy = this.#lookup(this.#asw, actual.socketPath); // the executor keeps what it is given
      if (copy !== undefined) this.#unregister(copy);
    }
    for (const wanted of desired.values()) {
      // Registered already, or an older generation is still registered here (its unregister settles first).
      if (!this.#asw.pluginExists(wanted.socketPath)) this.#register(wanted);
    }
    // Forget refusals of sockets that are neither desired nor registered any more, and of those
    // registered as wanted (refused as pending while their attempt ran).
    for (const socketPath of this.#refusals.keys()) {
      const wanted = desired.get(socketPath);
      const actual = registered.get(socketPath);
      if (wanted === undefined && actual === undefined) this.#forget(socketPath);
      else if (wanted !== undefined && wanted.uuid === actual?.uuid) this.#refusals.delete(socketPath);
    }
  }

  /** The work for one socket path; O(1) in the number of plugins. */
  #reconcilePath(socketPath: string): void {
    const wanted = this.#lookup(this.#dsw, socketPath);
    const actual = this.#lookup(this.#asw, socketPath);
    if (actual !== undefined) {
      if (wanted !== undefined && wanted.uuid === actual.uuid) {
        // Registered as wanted: a refusal recorded while its attempt ran (pending) no longer applies.
        this.#refusals.delete(socketPath);
        return;
      }
      this.#unregister(actual);
      // The unregister takes the entry out of the actual state as it starts; the register
      // attempt is then refused as pending (visible in refusals()) and retried when it settles.
      if (wanted === undefined || this.#asw.pluginExists(socketPath)) return;
    }
    if (wanted !== undefined) {
      this.#register(wanted);
      return;
    }
    this.#forget(socketPath);
  }

  /** Every entry by socket path; not copied where the store can say so (a full pass only reads them). */
  #entries(state: (DesiredStateOfWorld | ActualStateOfWorld) & Lookup): Map<string, Readonly<PluginInfo>> {
    const entries = new Map<string, Readonly<PluginInfo>>();
    const add = (info: Readonly<PluginInfo>) => entries.set(info.socketPath, info);
    if (state.each !== undefined) state.each(add);
    else for (const info of copies(state)) add(info);
    return entries;
  }

  #lookup(state: (DesiredStateOfWorld | ActualStateOfWorld) & Lookup, socketPath: string) {
    if (state.get !== undefined) return state.get(socketPath);
    return copies(state).find((p) => p.socketPath === socketPath);
  }

  #register(wanted: Readonly<PluginInfo>): void {
    const refusal = this.#executor.tryRegisterPlugin(
      wanted.socketPath,
      { uuid: wanted.uuid, timestamp: wanted.timestamp, foundInDeprecatedDir: wanted.foundInDeprecatedDir },
      this.#getHandler,
      this.#asw,
    );
    this.#record(wanted.socketPath, 'register', refusal);
  }

  #unregister(actual: PluginInfo): void {
    this.#record(actual.socketPath, 'unregister', this.#executor.tryUnregisterPlugin(actual, this.#asw));
  }

  #record(socketPath: string, operation: 'register' | 'unregister', refusal: RunRefusal | undefined): void {
    if (refusal === undefined) {
      this.#refusals.delete(socketPath);
      return;
    }
    if (refusal.code === 'BERTH_SHUT_DOWN') return;
    const at = this.#clock.now();
    let message: string | undefined;
    const record: Refusal = {
      operation,
      code: refusal.code,
      at,
      get message() {
        message ??= refusal.toError().message;
        return message;
      },
    };
    if (refusal.retryAt !== undefined) {
      record.retryAt = refusal.retryAt;
      this.#wakeAt(socketPath, refusal.retryAt + 1);
    }
    // Expected: visible in sockets() and refusals(), not logged per refusal (a storm refuses thousands).
    this.#refusals.set(socketPath, record);
  }

  #forget(socketPath: string): void {
    this.#refusals.delete(socketPath);
    const timer = this.#retryTimers.get(socketPath);
    if (timer !== undefined) {
      this.#clock.clearTimeout(timer);
      this.#retryTimers.delete(socketPath);
    }
  }

  #touch(socketPath: string): void {
    if (!this.#running) return;
    this.#dirty.add(socketPath);
    this.#scheduleFlush();
  }

  #scheduleFlush(): void {
    if (this.#flushScheduled) return;
    this.#flushScheduled = true;
    // Coalesce a burst (a directory walk, many operations settling) into one turn.
    setImmediate(() => {
      this.#flushScheduled = false;
      this.#flush();
    });
  }

  /** The dirty paths, a time slice at a time: a storm's thousand new sockets start over several turns. */
  #flush(): void {
    if (!this.#running) return;
    if (this.#fullPassWanted) {
      this.reconcile();
      return;
    }
    for (const socketPath of this.#dirty) {
      this.#dirty.delete(socketPath);
      this.#reconcilePath(socketPath);
      if (this.#dirty.size > 0 && this.#turn.spent()) {
        this.#scheduleFlush();
        return;
      }
    }
  }

  #onOperationSettled(event: OperationEvent): void {
    if (event.type === 'register-failed' || event.type === 'unregister-failed') {
      const { error } = event;
      if (
        event.type === 'register-failed' &&
        error.code === 'BERTH_NO_HANDLER' &&
        typeof error.details.type === 'string' &&
        this.#handlers.get(error.details.type) !== undefined
      ) {
        // The handler arrived while this attempt was running: retry now, not after the backoff.
        this.#executor.resetBackoff(event.socketPath);
      } else if (event.retryAt !== null) {
        this.#wakeAt(event.socketPath, event.retryAt + 1);
      }
    }
    // Whatever settled may unblock work for its path (e.g. a register refused while an unregister ran).
    this.#touch(event.socketPath);
  }

  retryFailed(matches: (error: BerthError) => boolean): number {
    let reset = 0;
    for (const socketPath of this.#executor.keys()) {
      const error = this.#executor.status(socketPath)?.lastError;
      if (error !== undefined && matches(error) && this.#executor.resetBackoff(socketPath)) reset++;
    }
    if (reset > 0) this.wake();
    return reset;
  }

  #onHandlerAdded(type: string): void {
    let reset = 0;
    for (const socketPath of this.#executor.keys()) {
      const error = this.#executor.status(socketPath)?.lastError;
      if (error?.code === 'BERTH_NO_HANDLER' && error.details.type === type) {
        if (this.#executor.resetBackoff(socketPath)) reset++;
      }
    }
    this.#logger.debug({ type, reset }, `handler for ${type} added`);
    this.wake();
  }

  /** One timer per path, for the end of its backoff window: a waiting socket costs nothing until then. */
  #wakeAt(socketPath: string, at: number): void {
    if (!this.#running) return;
    const existing = this.#retryTimers.get(socketPath);
    if (existing) this.#clock.clearTimeout(existing);
    const timer = this.#clock.setTimeout(
      () => {
        if (this.#retryTimers.get(socketPath) === timer) this.#retryTimers.delete(socketPath);
        this.#touch(socketPath);
      },
      Math.max(0, at - this.#clock.now()),
    );
    this.#retryTimers.set(socketPath, timer);
  }

  #scheduleResync(): void {
    if (this.#resyncTimer) this.#clock.clearTimeout(this.#resyncTimer);
    this.#resyncTimer = this.#clock.setTimeout(() => {
      this.#resyncTimer = undefined;
      this.reconcile();
    }, this.#resyncPeriodMs);
  }
}

/** Copies of every entry, through the interface every state has. */
function copies(state: DesiredStateOfWorld | ActualStateOfWorld): PluginInfo[] {
  return 'getPluginsToRegister' in state ? state.getPluginsToRegister() : state.getRegisteredPlugins();
}
