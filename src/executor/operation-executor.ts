import type { ActualStateOfWorld, PluginInfo } from '../cache/types.js';
import {
  BerthError,
  type BerthMode,
  backoffProblem,
  type Clock,
  errorMessage,
  isBerthError,
  LifecycleComponent,
  type Logger,
  TurnBudget,
  WORK_SLICE_MS,
} from '../common/index.js';
import {
  DEFAULT_EXECUTOR_OPTIONS,
  type ExecutorTimeouts,
  type SlotBudgets,
  type YoungSocketRetry,
} from './executor-options.js';
import { RegistrationLanes } from './lanes.js';
import {
  createOperationMap,
  type OperationMap,
  type OperationOutcome,
  type RunRefusal,
} from './operation-map.js';
import { probeBeforeSlot, type RegisterDeps, registerOperation } from './register-operation.js';
import type {
  HandlerLookup,
  OperationEvent,
  OperationExecutor,
  OperationExecutorOptions,
  PluginGeneration,
} from './types.js';
import { unregisterOperation } from './unregister-operation.js';
import { isConnectionRefused } from './young-socket.js';

export function createOperationExecutor(options: OperationExecutorOptions): OperationExecutor {
  return new Executor(options);
}

class Executor extends LifecycleComponent implements OperationExecutor {
  readonly #clock: Clock;
  readonly #logger: Logger;
  readonly #dial: OperationExecutorOptions['dial'];
  readonly #timeouts: ExecutorTimeouts;
  readonly #map: OperationMap;
  readonly #lanes: RegistrationLanes;
  /** One turn's time shared by every attempt's continuations (TurnBudget). */
  readonly #turn: TurnBudget;
  readonly #young: YoungSocketRetry | false;
  readonly #mode: BerthMode;
  readonly #holdConnection: OperationExecutorOptions['holdConnection'];
  /** Sockets in young-socket retries now (their schedule is dense only while few are). */
  readonly #youngRetrying = { count: 0 };
  readonly #listeners = new Set<(event: OperationEvent) => void>();
  /** What every registration attempt is given: the same for all of them. */
  readonly #registerDeps: RegisterDeps;

  constructor(options: OperationExecutorOptions) {
    super();
    this.#clock = options.clock;
    this.#logger = options.logger;
    this.#dial = options.dial;
    this.#timeouts = { ...DEFAULT_EXECUTOR_OPTIONS.timeouts, ...definedOnly(options.timeouts ?? {}) };
    for (const [name, value] of Object.entries(this.#timeouts)) {
      if (!Number.isFinite(value) || value <= 0) {
        throw new BerthError(
          'BERTH_INVALID_ARGUMENT',
          `operation executor: timeouts.${name} must be a positive number of milliseconds, got ${String(value)}`,
        );
      }
    }
    const backoff = options.backoff ?? DEFAULT_EXECUTOR_OPTIONS.backoff;
    const problem = backoffProblem(backoff);
    if (problem !== undefined) {
      throw new BerthError('BERTH_INVALID_ARGUMENT', `operation executor: backoff.${problem}`);
    }
    const concurrency =
      options.maxConcurrentRegistrations ?? DEFAULT_EXECUTOR_OPTIONS.maxConcurrentRegistrations;
    if (!Number.isInteger(concurrency) || concurrency < 1) {
      throw new BerthError(
        'BERTH_INVALID_ARGUMENT',
        `operation executor: maxConcurrentRegistrations must be a positive integer, got ${String(concurrency)}`,
      );
    }
    const budgets: SlotBudgets = {
      ...DEFAULT_EXECUTOR_OPTIONS.slotBudgets,
      ...definedOnly(options.slotBudgets ?? {}),
    };
    for (const [name, value] of Object.entries(budgets)) {
      const slotCount = name.endsWith('Slots');
      if (!Number.isFinite(value) || value <= 0 || (slotCount && !Number.isInteger(value))) {
        throw new BerthError(
          'BERTH_INVALID_ARGUMENT',
          `operation executor: slotBudgets.${name} must be a positive ${slotCount ? 'integer' : 'number of milliseconds'}, got ${String(value)}`,
        );
      }
    }
    this.#lanes = new RegistrationLanes(this.#clock, concurrency, budgets);
    this.#young = options.youngSocketRetry ?? DEFAULT_EXECUTOR_OPTIONS.youngSocketRetry;
    this.#mode = options.mode ?? 'registrar';
    this.#holdConnection = options.holdConnection;
    this.#turn = options.turn ?? new TurnBudget(WORK_SLICE_MS);
    // One map for both operations: per-path serialisation and shared backoff, as upstream.
    this.#map = createOperationMap({ clock: this.#clock, logger: this.#logger, backoff });
    if (options.onEvent) this.#listeners.add(options.onEvent);
    this.#registerDeps = {
      dial: this.#dial,
      timeouts: this.#timeouts,
      logger: this.#logger,
      lanes: this.#lanes,
      youngSocketRetry: this.#young,
      retrying: this.#youngRetrying,
      mode: this.#mode,
      holdConnection: this.#holdConnection,
      turn: this.#turn,
    };
  }

  protected override async onStop(): Promise<void> {
    this.#map.stop();
    await this.#map.waitForCompletion();
  }

  registerPlugin(
    socketPath: string,
    generation: PluginGeneration,
    getHandler: HandlerLookup,
    asw: ActualStateOfWorld,
  ): void {
    const refusal = this.tryRegisterPlugin(socketPath, generation, getHandler, asw);
    if (refusal !== undefined) throw refusal.toError();
  }

  unregisterPlugin(info: PluginInfo, asw: ActualStateOfWorld): void {
    const refusal = this.tryUnregisterPlugin(info, asw);
    if (refusal !== undefined) throw refusal.toError();
  }

  tryRegisterPlugin(
    socketPath: string,
    generation: PluginGeneration,
    getHandler: HandlerLookup,
    asw: ActualStateOfWorld,
  ): RunRefusal | undefined {
    let registered: PluginInfo | undefined;
    const refusal = this.#map.tryRun(
      socketPath,
      async (signal) => {
        try {
          // The attempt waits for its handshake slot here, before it builds anything: in a
          // storm of 5,000 nearly all of them wait, and an attempt waiting inside
          // registerOperation held its suspended frames, closures and promises (about 4 KB;
          // 28 MB for a storm of 5,000 in a heap snapshot) through the young generation's
          // collections into the old one.
          const offender = this.#lanes.isOffender(socketPath, generation.uuid);
          // The map keeps this generation's last failure until this attempt settles. A socket
          // that refused it (a stale file, most likely) is probed before it takes a slot.
          const refusedLast =
            isConnectionRefused(this.#map.status(socketPath)?.lastError) &&
            (await probeBeforeSlot(this.#registerDeps, { socketPath, generation }));
          await this.#lanes.handshakeLane(offender).acquire(signal);
          registered = await registerOperation(
            this.#registerDeps,
            { socketPath, generation, getHandler, asw, refusedLast },
            signal,
            { offender },
          );
        } catch (err) {
          // Stopped mid-attempt: say so, rather than blame the step the abort happened to hit.
          if (signal.aborted && !isBerthError(err, 'BERTH_SHUT_DOWN')) {
            throw new BerthError(
              'BERTH_SHUT_DOWN',
              `RegisterPlugin at socket ${socketPath} aborted: shutting down`,
              {
                cause: err,
                details: isBerthError(err) ? err.details : {},
              },
            );
          }
          throw err;
        }
      },
      {
        generation: generation.uuid,
        onSettled: (outcome) => this.#emit(registerEvent(outcome, socketPath, generation.uuid, registered)),
      },
    );
    if (refusal === undefined)
      this.#logger.debug({ socketPath, uuid: generation.uuid }, `RegisterPlugin started for ${socketPath}`);
    return refusal;
  }

  tryUnregisterPlugin(info: PluginInfo, asw: ActualStateOfWorld): RunRefusal | undefined {
    const refusal = this.#map.tryRun(info.socketPath, () => unregisterOperation(info, asw, this.#logger), {
      generation: info.uuid,
      onSettled: (outcome) => this.#emit(unregisterEvent(outcome, info)),
    });
    if (refusal === undefined)
      this.#logger.debug({ socketPath: info.socketPath }, `UnregisterPlugin started for ${info.socketPath}`);
    return refusal;
  }

  isPending(socketPath: string): boolean {
    return this.#map.isPending(socketPath);
  }

  get running(): number {
    return this.#map.running;
  }

  status(socketPath: string) {
    return this.#map.status(socketPath);
  }

  laneUsage() {
    return this.#lanes.usage();
  }

  keys(): string[] {
    return this.#map.keys();
  }

  resetBackoff(socketPath: string): boolean {
    const reset = this.#map.resetBackoff(socketPath);
    // A fresh start: the socket's next attempt is not an offender's either.
    if (reset) this.#lanes.forget(socketPath);
    return reset;
  }

  addListener(listener: (event: OperationEvent) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  wait(): Promise<void> {
    return this.#map.wait();
  }

  waitForCompletion(): Promise<void> {
    return this.#map.waitForCompletion();
  }

  #emit(event: OperationEvent): void {
    // A failure is logged by whoever turns it into a 'failed' event (the plugin manager,
    // or the daemon's event log), and its backoff by the operation map: not again here.
    if (event.type !== 'register-failed' && event.type !== 'unregister-failed') {
      this.#logger.debug({ socketPath: event.socketPath }, `${event.type}: ${event.socketPath}`);
    }
    for (const listener of this.#listeners) {
      try {
        listener(event);
      } catch (err) {
        this.#logger.error({ err }, `operation event listener threw: ${errorMessage(err)}`);
      }
    }
  }
}

function registerEvent(
  outcome: OperationOutcome,
  socketPath: string,
  generation: string,
  registered: PluginInfo | undefined,
): OperationEvent {
  const durationMs = outcome.finishedAt - outcome.startedAt;
  if (outcome.error === undefined && registered !== undefined) {
    return {
      type: 'register-succeeded',
      at: outcome.finishedAt,
      socketPath,
      plugin: registered,
      durationMs,
      attempts: outcome.attempts,
    };
  }
  const error =
    outcome.error ?? new BerthError('BERTH_INTERNAL', 'register operation ended without a result');
  const event: OperationEvent = {
    type: 'register-failed',
    at: outcome.finishedAt,
    socketPath,
    generation,
    error,
    retryAt: outcome.retryAt ?? null,
    attempts: outcome.attempts,
    durationMs,
  };
  const { type, name } = error.details;
  if (typeof type === 'string' && typeof name === 'string') event.plugin = { type, name };
  return event;
}

function unregisterEvent(outcome: OperationOutcome, info: PluginInfo): OperationEvent {
  const durationMs = outcome.finishedAt - outcome.startedAt;
  if (outcome.error === undefined) {
    return {
      type: 'unregister-succeeded',
      at: outcome.finishedAt,
      socketPath: info.socketPath,
      plugin: info,
      durationMs,
    };
  }
  return {
    type: 'unregister-failed',
    at: outcome.finishedAt,
    socketPath: info.socketPath,
    plugin: info,
    error: outcome.error,
    retryAt: outcome.retryAt ?? null,
    attempts: outcome.attempts,
    durationMs,
  };
}

function definedOnly<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}
