import type { ActualStateOfWorld, DesiredStateOfWorld, PluginInfo } from '../cache/types.js';
import {
  BerthError,
  type BerthErrorCode,
  type Clock,
  type ClockTimer,
  errorMessage,
  isBerthError,
  type Logger,
} from '../common/index.js';
import type { OperationEvent, OperationExecutor } from '../executor/index.js';
import type { PluginHandler } from '../handlers/types.js';

/** What the reconciler needs from the handler table (src/handlers HandlerTable satisfies it). */
export interface ReconcilerHandlers {
  get(type: string): PluginHandler | undefined;
  /** Called with the type whenever a handler is added; returns an unsubscribe function. */
  onAdded(listener: (type: string) => void): () => void;
}

export interface ReconcilerOptions {
  desiredState: DesiredStateOfWorld;
  actualState: ActualStateOfWorld;
  executor: OperationExecutor;
  handlers: ReconcilerHandlers;
  clock: Clock;
  logger: Logger;
  /** Safety-net pass period; the reconciler is event-driven, so this can be long. */
  resyncPeriodMs: number;
}

/** A register/unregister the reconciler wanted but the executor refused (pending or in backoff). */
export interface Refusal {
  operation: 'register' | 'unregister';
  code: BerthErrorCode;
  message: string;
  at: number;
  /** For a backoff refusal: when a retry is permitted (strictly after). */
  retryAt?: number;
}

export interface Reconciler extends AsyncDisposable {
  /** Subscribes to its wake-up sources and runs a first pass. Aborting `signal` stops it. */
  start(signal?: AbortSignal): void;
  /** Idempotent. Does not stop the executor (its owner does). */
  stop(): Promise<void>;
  /** Asks for a pass soon; many calls in one tick coalesce into one pass. */
  wake(): void;
  /** One pass, now: unregister what should go, then register what should come. */
  reconcile(): void;
  /** The last refusal per socket path, for visibility (kubernetes#138171). */
  refusals(): ReadonlyMap<string, Refusal>;
}

export function createReconciler(options: ReconcilerOptions): Reconciler {
  if (!Number.isFinite(options.resyncPeriodMs) || options.resyncPeriodMs <= 0) {
    throw new BerthError(
      'BERTH_INVALID_ARGUMENT',
      `reconciler: resyncPeriodMs must be a positive number of milliseconds, got ${String(options.resyncPeriodMs)}`,
    );
  }
  return new EventDrivenReconciler(options);
}

/**
 * The kubelet reconciler, woken instead of polled. Upstream sleeps 1 s
 * between passes, so a new plugin waits up to a second; berth runs a pass on
 * every desired-state change, when a handler is added (plugins refused for
 * lack of that handler retry at once), when an operation settles (a register
 * refused because the path's unregister was still running goes right after
 * it), and when a backoff window ends. The periodic resync is only a safety net.
 */
class EventDrivenReconciler implements Reconciler {
  readonly #dsw: DesiredStateOfWorld;
  readonly #asw: ActualStateOfWorld;
  readonly #executor: OperationExecutor;
  readonly #handlers: ReconcilerHandlers;
  readonly #clock: Clock;
  readonly #logger: Logger;
  readonly #resyncPeriodMs: number;
  readonly #refusals = new Map<string, Refusal>();
  readonly #retryTimers = new Map<string, ClockTimer>();
  readonly #unsubscribe: Array<() => void> = [];
  #resyncTimer: ClockTimer | undefined;
  #wakeScheduled = false;
  #state: 'idle' | 'running' | 'stopped' = 'idle';
  readonly #getHandler = (type: string) => this.#handlers.get(type);

  constructor(options: ReconcilerOptions) {
    this.#dsw = options.desiredState;
    this.#asw = options.actualState;
    this.#executor = options.executor;
    this.#handlers = options.handlers;
    this.#clock = options.clock;
    this.#logger = options.logger;
    this.#resyncPeriodMs = options.resyncPeriodMs;
  }

  start(signal?: AbortSignal): void {
    if (this.#state !== 'idle') return;
    this.#state = 'running';
    if (signal?.aborted) {
      void this.stop();
      return;
    }
    signal?.addEventListener('abort', () => void this.stop(), { once: true });
    this.#unsubscribe.push(
      this.#dsw.onChange(() => this.wake()),
      this.#handlers.onAdded((type) => this.#onHandlerAdded(type)),
      this.#executor.addListener((event) => this.#onOperationSettled(event)),
    );
    this.reconcile();
  }

  async stop(): Promise<void> {
    if (this.#state === 'stopped') return;
    this.#state = 'stopped';
    for (const off of this.#unsubscribe.splice(0)) off();
    if (this.#resyncTimer) this.#clock.clearTimeout(this.#resyncTimer);
    this.#resyncTimer = undefined;
    for (const timer of this.#retryTimers.values()) this.#clock.clearTimeout(timer);
    this.#retryTimers.clear();
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.stop();
  }

  wake(): void {
    if (this.#state !== 'running' || this.#wakeScheduled) return;
    this.#wakeScheduled = true;
    // Coalesce a burst of changes (a directory walk, a re-created socket) into one pass.
    setImmediate(() => {
      this.#wakeScheduled = false;
      this.reconcile();
    });
  }

  refusals(): ReadonlyMap<string, Refusal> {
    return this.#refusals;
  }

  reconcile(): void {
    if (this.#state !== 'running') return;
    this.#scheduleResync();
    const desired = new Map<string, PluginInfo>();
    for (const plugin of this.#dsw.getPluginsToRegister()) desired.set(plugin.socketPath, plugin);

    // Unregistrations first: gone from the desired state, or replaced by a new generation.
    for (const registered of this.#asw.getRegisteredPlugins()) {
      const wanted = desired.get(registered.socketPath);
      if (wanted !== undefined && wanted.uuid === registered.uuid) continue;
      this.#attempt(registered.socketPath, 'unregister', () =>
        this.#executor.unregisterPlugin(registered, this.#asw),
      );
    }

    for (const wanted of desired.values()) {
      if (this.#asw.pluginExistsWithCorrectUUID(wanted)) continue;
      if (this.#asw.pluginExists(wanted.socketPath)) {
        // An older generation is still registered here; its unregister settles first and wakes us.
        continue;
      }
      this.#attempt(wanted.socketPath, 'register', () =>
        this.#executor.registerPlugin(
          wanted.socketPath,
          {
            uuid: wanted.uuid,
            timestamp: wanted.timestamp,
            foundInDeprecatedDir: wanted.foundInDeprecatedDir,
          },
          this.#getHandler,
          this.#asw,
        ),
      );
    }

    // Forget refusals of sockets that are neither desired nor registered any more.
    for (const socketPath of this.#refusals.keys()) {
      if (!desired.has(socketPath) && !this.#asw.pluginExists(socketPath)) this.#refusals.delete(socketPath);
    }
  }

  #attempt(socketPath: string, operation: 'register' | 'unregister', start: () => void): void {
    try {
      start();
      this.#refusals.delete(socketPath);
      this.#logger.debug({ socketPath, operation }, `${operation} of ${socketPath} started`);
    } catch (err) {
      if (isBerthError(err, 'BERTH_OPERATION_PENDING') || isBerthError(err, 'BERTH_OPERATION_BACKOFF')) {
        const refusal: Refusal = { operation, code: err.code, message: err.message, at: this.#clock.now() };
        const retryAt = err.details.retryAt;
        if (typeof retryAt === 'number') {
          refusal.retryAt = retryAt;
          this.#wakeAt(socketPath, retryAt + 1);
        }
        this.#refusals.set(socketPath, refusal);
        // Expected; visible at debug level with the remaining backoff (kubernetes#138171).
        this.#logger.debug(
          {
            socketPath,
            operation,
            code: err.code,
            ...(refusal.retryAt === undefined ? {} : { remainingMs: refusal.retryAt - refusal.at }),
          },
          `${operation} of ${socketPath} skipped: ${err.message}`,
        );
      } else if (isBerthError(err, 'BERTH_SHUT_DOWN')) {
        this.#logger.debug({ socketPath, operation }, `${operation} of ${socketPath} skipped: shutting down`);
      } else {
        this.#logger.error(
          { socketPath, operation, err },
          `${operation} of ${socketPath} failed to start: ${errorMessage(err)}`,
        );
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
    this.wake();
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

  /** One timer per path, for the end of its backoff window. */
  #wakeAt(socketPath: string, at: number): void {
    if (this.#state !== 'running') return;
    const existing = this.#retryTimers.get(socketPath);
    if (existing) this.#clock.clearTimeout(existing);
    const timer = this.#clock.setTimeout(
      () => {
        if (this.#retryTimers.get(socketPath) === timer) this.#retryTimers.delete(socketPath);
        this.wake();
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
