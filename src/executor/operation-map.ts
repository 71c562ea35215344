import { type BackoffSetting, BerthError, type Clock, type Logger } from '../common/index.js';
import { DEFAULT_EXECUTOR_BACKOFF } from './executor-options.js';
import { ExponentialBackoff } from './exponential-backoff.js';

/**
 * At most one operation per key, with exponential backoff after a failure
 * (kubelet `goroutinemap`). `run` never waits for the operation: it either
 * starts it or refuses synchronously with a typed error, and the result shows
 * up through `status`, `onSettled` and whatever the operation itself changes.
 */
export type Operation = (signal: AbortSignal) => Promise<void> | void;

export interface OperationMapOptions {
  clock: Clock;
  logger: Logger;
  /**
   * Keep failed entries and refuse reruns inside a growing window (upstream
   * `exponentialBackOffOnError`). `true` is the default policy (500 ms doubling
   * to 122 s); `false` forgets a failure at once.
   */
  backoff: boolean | BackoffSetting;
}

/**
 * Why `tryRun` did not start an operation. A plain value: refusals are the
 * reconciler's normal traffic (a storm refuses thousands), so no error object
 * or stack is built unless someone asks for one.
 */
export interface RunRefusal {
  code: 'BERTH_OPERATION_PENDING' | 'BERTH_OPERATION_BACKOFF' | 'BERTH_SHUT_DOWN';
  key: string;
  /** For a backoff refusal: when a retry is permitted (strictly after). */
  retryAt?: number;
  /** The refusal as the BerthError that `run` throws (with the upstream text). */
  toError(): BerthError;
}

export interface RunOptions {
  /**
   * The generation of the thing the operation works on (berth: the socket's uuid).
   * A run with a different generation than the one that last failed starts with a
   * fresh backoff: a stale socket replaced by a live plugin on the same path is not delayed.
   */
  generation?: string;
  /** Called once when this run settles, after the map has recorded the outcome. */
  onSettled?: (outcome: OperationOutcome) => void;
}

export interface OperationOutcome {
  key: string;
  /** Undefined on success. A non-BerthError thrown by the operation arrives as BERTH_INTERNAL. */
  error?: BerthError;
  generation?: string;
  /** Runs started for this key since its last success (or generation change), this one included. */
  attempts: number;
  /** When a retry is permitted again (strictly after this instant); only after a failure with backoff. */
  retryAt?: number;
  startedAt: number;
  finishedAt: number;
}

export interface OperationStatus {
  pending: boolean;
  lastError?: BerthError;
  lastErrorAt?: number;
  retryAt?: number;
  attempts: number;
  generation?: string;
}

export interface OperationMap {
  /** Starts `operation` under `key`, or throws BERTH_OPERATION_PENDING / BERTH_OPERATION_BACKOFF / BERTH_SHUT_DOWN. */
  run(key: string, operation: Operation, options?: RunOptions): void;
  /** Starts `operation` under `key` and returns undefined, or returns why not (nothing thrown). */
  tryRun(key: string, operation: Operation, options?: RunOptions): RunRefusal | undefined;
  isPending(key: string): boolean;
  /** Operations running now. */
  readonly running: number;
  status(key: string): OperationStatus | undefined;
  /** Keys with an entry: running, or failed and remembered for backoff. */
  keys(): string[];
  /** Forgets a settled key's failure so the next run is permitted at once. False if running or unknown. */
  resetBackoff(key: string): boolean;
  /** Called whenever any run settles; returns an unsubscribe function. */
  onSettled(listener: (outcome: OperationOutcome) => void): () => void;
  /** Resolves when the map is empty (never, while an entry sits in backoff). */
  wait(): Promise<void>;
  /** Resolves when nothing is running. */
  waitForCompletion(): Promise<void>;
  /** Aborts the signals of running operations and refuses new runs. Idempotent. */
  stop(): void;
}

interface Waiter {
  done: () => boolean;
  resolve: () => void;
}

interface Entry {
  pending: boolean;
  backoff: ExponentialBackoff;
  attempts: number;
  generation: string | undefined;
  controller: AbortController | undefined;
  lastError: BerthError | undefined;
}

export function createOperationMap(options: OperationMapOptions): OperationMap {
  return new GoroutineMap(options);
}

class GoroutineMap implements OperationMap {
  readonly #clock: Clock;
  readonly #logger: Logger;
  readonly #backoff: false | Exclude<BackoffSetting, false>;
  readonly #entries = new Map<string, Entry>();
  readonly #listeners = new Set<(outcome: OperationOutcome) => void>();
  #waiters: Waiter[] = [];
  #stopped = false;
  /** Entries with pending = true, counted so waitForCompletion costs O(1) per settle. */
  #running = 0;

  constructor(options: OperationMapOptions) {
    this.#clock = options.clock;
    this.#logger = options.logger;
    this.#backoff = options.backoff === true ? DEFAULT_EXECUTOR_BACKOFF : options.backoff;
  }

  run(key: string, operation: Operation, options: RunOptions = {}): void {
    const refusal = this.tryRun(key, operation, options);
    if (refusal !== undefined) throw refusal.toError();
  }

  tryRun(key: string, operation: Operation, options: RunOptions = {}): RunRefusal | undefined {
    if (this.#stopped) {
      return {
        code: 'BERTH_SHUT_DOWN',
        key,
        toError: () =>
          new BerthError('BERTH_SHUT_DOWN', `Failed to create operation with name "${key}": stopped`),
      };
    }
    let entry = this.#entries.get(key);
    if (entry?.pending) {
      return {
        code: 'BERTH_OPERATION_PENDING',
        key,
        toError: () =>
          new BerthError(
            'BERTH_OPERATION_PENDING',
            `Failed to create operation with name ${JSON.stringify(key)}. An operation with that name is already executing.`,
            { details: { operationName: key } },
          ),
      };
    }
    if (entry && options.generation !== undefined && entry.generation !== options.generation) {
      // berth fix: the failure belonged to another generation (e.g. a stale socket file).
      this.#entries.delete(key);
      entry = undefined;
    }
    if (entry && this.#backoff) {
      const now = this.#clock.now();
      if (entry.backoff.refuses(now)) {
        const backoff = entry.backoff;
        return {
          code: 'BERTH_OPERATION_BACKOFF',
          key,
          retryAt: backoff.retryAt,
          toError: () => backoff.refusal(key, now) as BerthError,
        };
      }
    }
    if (!entry) {
      entry = {
        pending: false,
        backoff: new ExponentialBackoff(this.#backoff || DEFAULT_EXECUTOR_BACKOFF),
        attempts: 0,
        generation: undefined,
        controller: undefined,
        lastError: undefined,
      };
      this.#entries.set(key, entry);
    }
    entry.pending = true;
    this.#running += 1;
    entry.attempts += 1;
    if (options.generation !== undefined) entry.generation = options.generation;
    const controller = new AbortController();
    entry.controller = controller;
    const startedAt = this.#clock.now();

    let promise: Promise<void>;
    try {
      // Started synchronously; a synchronous throw is contained like a rejection.
      promise = Promise.resolve(operation(controller.signal));
    } catch (err) {
      promise = Promise.reject(err);
    }
    const current = entry;
    promise.then(
      () => this.#complete(key, current, undefined, startedAt, options.onSettled),
      (err: unknown) => this.#complete(key, current, toBerthError(key, err), startedAt, options.onSettled),
    );
    return undefined;
  }

  #complete(
    key: string,
    entry: Entry,
    error: BerthError | undefined,
    startedAt: number,
    onSettled: ((outcome: OperationOutcome) => void) | undefined,
  ): void {
    const finishedAt = this.#clock.now();
    entry.pending = false;
    this.#running -= 1;
    entry.controller = undefined;
    const outcome: OperationOutcome = { key, attempts: entry.attempts, startedAt, finishedAt };
    if (entry.generation !== undefined) outcome.generation = entry.generation;
    if (error === undefined || !this.#backoff) {
      // Success (or no backoff): forget the key, which also resets its backoff.
      if (this.#entries.get(key) === entry) this.#entries.delete(key);
      if (error !== undefined) {
        outcome.error = error;
        this.#logger.error({ operation: key, err: error }, `Operation for "${key}" failed: ${error.message}`);
      }
    } else {
      entry.backoff.update(error, finishedAt);
      entry.lastError = error;
      outcome.error = error;
      outcome.retryAt = entry.backoff.retryAt;
      this.#logger.debug(
        { operation: key, code: error.code, retryAt: new Date(outcome.retryAt).toISOString() },
        entry.backoff.noRetriesPermittedMessage(key),
      );
    }
    this.#notifyWaiters();
    for (const listener of [onSettled, ...this.#listeners]) {
      if (!listener) continue;
      try {
        listener(outcome);
      } catch (err) {
        this.#logger.error({ operation: key, err }, 'operation settle listener threw');
      }
    }
  }

  isPending(key: string): boolean {
    return this.#entries.get(key)?.pending ?? false;
  }

  get running(): number {
    return this.#running;
  }

  status(key: string): OperationStatus | undefined {
    const entry = this.#entries.get(key);
    if (!entry) return undefined;
    const status: OperationStatus = { pending: entry.pending, attempts: entry.attempts };
    if (entry.lastError) {
      status.lastError = entry.lastError;
      status.lastErrorAt = entry.backoff.lastErrorTime;
      status.retryAt = entry.backoff.retryAt;
    }
    if (entry.generation !== undefined) status.generation = entry.generation;
    return status;
  }

  keys(): string[] {
    return [...this.#entries.keys()];
  }

  resetBackoff(key: string): boolean {
    const entry = this.#entries.get(key);
    if (!entry || entry.pending) return false;
    this.#entries.delete(key);
    this.#notifyWaiters();
    return true;
  }

  onSettled(listener: (outcome: OperationOutcome) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  wait(): Promise<void> {
    return this.#waitUntil(() => this.#entries.size === 0);
  }

  waitForCompletion(): Promise<void> {
    return this.#waitUntil(() => this.#running === 0);
  }

  stop(): void {
    if (this.#stopped) return;
    this.#stopped = true;
    for (const entry of this.#entries.values()) {
      entry.controller?.abort(new BerthError('BERTH_SHUT_DOWN', 'operation map stopped'));
    }
  }

  #waitUntil(done: () => boolean): Promise<void> {
    if (done()) return Promise.resolve();
    return new Promise((resolve) => this.#waiters.push({ done, resolve }));
  }

  #notifyWaiters(): void {
    if (this.#waiters.length === 0) return;
    const still: Waiter[] = [];
    for (const waiter of this.#waiters) {
      if (waiter.done()) waiter.resolve();
      else still.push(waiter);
    }
    this.#waiters = still;
  }
}

/** A thrown non-BerthError (upstream: a recovered panic) still counts as a typed failure. */
function toBerthError(key: string, err: unknown): BerthError {
  return BerthError.from(err, 'BERTH_INTERNAL', `operation "${key}" failed`);
}
