import { BerthError } from './errors.js';

/**
 * The one lifecycle contract of every long-lived berth component (the
 * registry, storage, the watch store, the executor, the reconciler, liveness,
 * the dispenser, the event bus, sources, the cluster writer and reader):
 *
 * - `start(signal?)` brings it up; aborting `signal` stops it.
 * - `stop()` is idempotent and memoised: every call returns the same promise.
 *   Stop before start is allowed and ends in `stopped`.
 * - `[Symbol.asyncDispose]` is `stop()`, for `await using`.
 * - `state` is readable at any time.
 */
export type LifecycleState = 'new' | 'starting' | 'running' | 'stopping' | 'stopped';

export interface Lifecycle extends AsyncDisposable {
  readonly state: LifecycleState;
  start(signal?: AbortSignal): Promise<void>;
  stop(): Promise<void>;
}

export interface LifecycleHooks {
  /** Brings the component up; called at most once. */
  onStart?: (signal: AbortSignal) => Promise<void> | void;
  /** Releases everything; called at most once, also after a failed or never-run start. */
  onStop?: () => Promise<void> | void;
}

/**
 * A reusable implementation of the contract, for composition: a component
 * holds one and forwards `state`, `start`, `stop` and `[Symbol.asyncDispose]`.
 * A start that throws stops the component (releasing what it had opened) and
 * rethrows. The signal passed to `onStart` aborts when stop begins.
 */
export class LifecycleController implements Lifecycle {
  #state: LifecycleState = 'new';
  #starting: Promise<void> | undefined;
  #stopping: Promise<void> | undefined;
  readonly #abort = new AbortController();
  readonly #hooks: LifecycleHooks;

  constructor(hooks: LifecycleHooks = {}) {
    this.#hooks = hooks;
  }

  get state(): LifecycleState {
    return this.#state;
  }

  /** Aborted once stop begins; components hand it to their timers and loops. */
  get signal(): AbortSignal {
    return this.#abort.signal;
  }

  start(signal?: AbortSignal): Promise<void> {
    if (this.#starting) return this.#starting;
    if (this.#stopping) {
      this.#starting = Promise.reject(
        new BerthError('BERTH_SHUT_DOWN', 'cannot start a component that was stopped; create a new one'),
      );
      return this.#starting;
    }
    this.#state = 'starting';
    if (signal?.aborted) {
      this.#starting = this.stop();
      return this.#starting;
    }
    signal?.addEventListener('abort', () => void this.stop(), { once: true });
    this.#starting = (async () => {
      try {
        await this.#hooks.onStart?.(this.#abort.signal);
      } catch (error) {
        await this.stop();
        throw error;
      }
      if (this.#state === 'starting') this.#state = 'running';
    })();
    return this.#starting;
  }

  stop(): Promise<void> {
    if (this.#stopping) return this.#stopping;
    this.#state = 'stopping';
    this.#abort.abort();
    this.#stopping = (async () => {
      try {
        await this.#hooks.onStop?.();
      } finally {
        this.#state = 'stopped';
      }
    })();
    return this.#stopping;
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.stop();
  }
}

/**
 * The contract as a base class: a component extends it, overrides `onStart`
 * and `onStop`, and gets `state`, `start`, `stop` and `[Symbol.asyncDispose]`
 * from one `LifecycleController` instead of forwarding them by hand. The hooks
 * have the controller's semantics (each runs at most once; `onStop` also runs
 * after a failed or never-run start). A subclass that needs more in `start` or
 * `stop` overrides them and calls `super`.
 */
export abstract class LifecycleComponent implements Lifecycle {
  readonly #controller = new LifecycleController({
    onStart: (signal) => this.onStart(signal),
    onStop: () => this.onStop(),
  });

  get state(): LifecycleState {
    return this.#controller.state;
  }

  /** Aborted once stop begins; hand it to timers, loops and calls in flight. */
  protected get lifecycleSignal(): AbortSignal {
    return this.#controller.signal;
  }

  /** True from the moment stop begins. */
  protected get stopBegun(): boolean {
    return this.#controller.signal.aborted;
  }

  start(signal?: AbortSignal): Promise<void> {
    return this.#controller.start(signal);
  }

  stop(): Promise<void> {
    return this.#controller.stop();
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.stop();
  }

  /** Brings the component up; the signal aborts when stop begins. */
  protected onStart(_signal: AbortSignal): Promise<void> | void {}

  /** Releases everything the component holds. */
  protected onStop(): Promise<void> | void {}
}
