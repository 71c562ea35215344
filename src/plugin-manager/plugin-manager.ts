import { Registry } from 'prom-client';
import {
  type ActualStateOfWorldStore,
  createActualStateOfWorld,
  createDesiredStateOfWorld,
  type DesiredStateOfWorldStore,
  type PluginInfo,
} from '../cache/index.js';
import {
  BERTH_MODES,
  BerthError,
  type BerthMode,
  type Clock,
  DEFAULT_BERTH_MODE,
  errorMessage,
  type LifecycleState,
  type Logger,
  type PluginEvent,
  silentLogger,
  systemClock,
} from '../common/index.js';
import { createOperationExecutor, type OperationEvent, type OperationExecutor } from '../executor/index.js';
import { createHandlerTable, type HandlerTable, type PluginHandler } from '../handlers/index.js';
import { createReconciler, DEFAULT_RESYNC_PERIOD_MS, type Reconciler } from '../reconciler/index.js';
import { dialRegistration } from '../registration/index.js';
import { createPluginWatcher, type PluginWatcher } from '../watcher/index.js';
import { createLivenessProber, DEFAULT_LIVENESS, type LivenessProber } from './liveness.js';
import { createPluginManagerMetrics, type PluginManagerMetrics } from './metrics.js';
import { type DeadSocket, socketStatuses } from './socket-status.js';
import type {
  ActualStateView,
  DeregistrationReason,
  DesiredStateView,
  PluginManager,
  PluginManagerOptions,
  RegisteredPlugin,
  SocketStatus,
} from './types.js';

export { DEFAULT_RESYNC_PERIOD_MS };

export function createPluginManager(options: PluginManagerOptions): PluginManager {
  return new BerthPluginManager(options);
}

interface Deferred {
  promise: Promise<void>;
  resolve: () => void;
  reject: (err: unknown) => void;
}

function deferred(): Deferred {
  let resolve: () => void = () => {};
  let reject: (err: unknown) => void = () => {};
  const promise = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

function invalid(message: string): BerthError {
  return new BerthError('BERTH_INVALID_ARGUMENT', `plugin manager: ${message}`);
}

/**
 * The composition root of plugin registration (kubelet plugin_manager.go):
 *
 *   watcher -> desired state -(wake)-> reconciler -> executor -> handler
 *                                          ^                      |
 *                  liveness (removes dead plugins from the desired state)
 *
 * The kubelet ignores the watcher's start error and polls the reconciler
 * every second; berth fails start() when the directory cannot be watched and
 * reconciles on every change.
 */
class BerthPluginManager implements PluginManager {
  readonly ready: Promise<void>;
  readonly desiredState: DesiredStateView;
  readonly actualState: ActualStateView;
  readonly metricsRegistry: Registry;

  readonly #clock: Clock;
  readonly #logger: Logger;
  readonly #logFailures: boolean;
  readonly #options: PluginManagerOptions;
  readonly #mode: BerthMode;
  readonly #dsw: DesiredStateOfWorldStore;
  readonly #asw: ActualStateOfWorldStore;
  readonly #handlers: HandlerTable;
  readonly #executor: OperationExecutor;
  readonly #reconciler: Reconciler;
  readonly #watcher: PluginWatcher;
  readonly #liveness: LivenessProber | undefined;
  readonly #metrics: PluginManagerMetrics;
  readonly #ready = deferred();
  readonly #listeners = new Set<(event: PluginEvent) => void>();
  readonly #unsubscribe: Array<() => void> = [];
  /** Plugins liveness gave up on, while their socket file lingers. */
  readonly #dead = new Map<string, DeadSocket>();
  /** When each socket's current generation was registered, and after how many attempts. */
  readonly #registeredAt = new Map<string, { uuid: string; at: number; attempts: number }>();
  /** Desired-state removals done by liveness: reported as 'failed', not as 'socket-removed'. */
  readonly #livenessRemovals = new Set<string>();
  #startPromise: Promise<void> | undefined;
  #stopPromise: Promise<void> | undefined;
  #started = false;
  #stopped = false;

  constructor(options: PluginManagerOptions) {
    if (typeof options?.pluginsDir !== 'string' || options.pluginsDir === '') {
      throw invalid('pluginsDir must be a non-empty path');
    }
    const resyncPeriodMs = options.resyncPeriodMs ?? DEFAULT_RESYNC_PERIOD_MS;
    if (!Number.isFinite(resyncPeriodMs) || resyncPeriodMs <= 0) {
      throw invalid(
        `resyncPeriodMs must be a positive number of milliseconds, got ${String(resyncPeriodMs)}`,
      );
    }
    this.#options = options;
    this.#mode = options.mode ?? DEFAULT_BERTH_MODE;
    if (!BERTH_MODES.includes(this.#mode)) {
      throw invalid(`mode must be one of ${BERTH_MODES.join(', ')}, got ${String(options.mode)}`);
    }
    this.#clock = options.clock ?? systemClock;
    // Each part names itself under the logger this manager was given, so a
    // `component` binding never nests (pino would repeat the key).
    const base = options.logger ?? silentLogger;
    this.#logger = base.child({ component: 'plugin-manager' });
    this.#logFailures = options.logFailures ?? true;
    const dial = options.dial ?? dialRegistration;
    if (options.onEvent) this.#listeners.add(options.onEvent);

    this.#dsw = createDesiredStateOfWorld({ clock: this.#clock, logger: base });
    this.#asw = createActualStateOfWorld({ logger: base });
    this.#handlers = createHandlerTable({ logger: base.child({ component: 'handlers' }) });
    this.#executor = createOperationExecutor({
      clock: this.#clock,
      logger: base.child({ component: 'operation-executor' }),
      dial,
      ...(options.timeouts === undefined ? {} : { timeouts: options.timeouts }),
      ...(options.backoff === undefined ? {} : { backoff: options.backoff }),
      ...(options.maxConcurrentRegistrations === undefined
        ? {}
        : { maxConcurrentRegistrations: options.maxConcurrentRegistrations }),
      ...(options.youngSocketRetry === undefined ? {} : { youngSocketRetry: options.youngSocketRetry }),
      mode: this.#mode,
      ...(options.slotBudgets === undefined ? {} : { slotBudgets: options.slotBudgets }),
    });
    this.#reconciler = createReconciler({
      desiredState: this.#dsw,
      actualState: this.#asw,
      executor: this.#executor,
      handlers: this.#handlers,
      clock: this.#clock,
      logger: base.child({ component: 'reconciler' }),
      resyncPeriodMs,
    });
    this.#watcher = createPluginWatcher({
      dir: options.pluginsDir,
      ...(options.deprecatedPluginsDir === undefined ? {} : { deprecatedDir: options.deprecatedPluginsDir }),
      desiredState: this.#dsw,
      clock: this.#clock,
      logger: base,
      ...(options.rescanIntervalMs === undefined ? {} : { rescanIntervalMs: options.rescanIntervalMs }),
      ...(options.useFsWatch === undefined ? {} : { useFsWatch: options.useFsWatch }),
      // An observer writes nothing into the directory it watches, not even to create it.
      createMissing: this.#mode !== 'observe',
    });
    if (options.liveness !== false) {
      this.#liveness = createLivenessProber({
        ...DEFAULT_LIVENESS,
        ...Object.fromEntries(Object.entries(options.liveness ?? {}).filter(([, v]) => v !== undefined)),
        clock: this.#clock,
        logger: base.child({ component: 'liveness' }),
        dial,
        isBusy: (socketPath) => this.#executor.isPending(socketPath),
        deferConnects: () => this.#executor.running > 0,
        onDead: (plugin, error, failures) => this.#onDead(plugin, error, failures),
        deadSockets: () => {
          this.#pruneDead();
          return [...this.#dead.keys()];
        },
        onAlive: (socketPath) => this.#onAlive(socketPath),
      });
    }

    this.metricsRegistry = options.metricsRegistry ?? new Registry();
    this.#metrics = createPluginManagerMetrics({
      registry: this.metricsRegistry,
      desiredState: this.#dsw,
      actualState: this.#asw,
    });

    const dsw = this.#dsw;
    const asw = this.#asw;
    this.desiredState = Object.freeze({
      getPluginsToRegister: () => dsw.getPluginsToRegister(),
      pluginExists: (socketPath: string) => dsw.pluginExists(socketPath),
      get: (socketPath: string) => dsw.get(socketPath),
    });
    this.actualState = Object.freeze({
      getRegisteredPlugins: () => asw.getRegisteredPlugins(),
      pluginExists: (socketPath: string) => asw.pluginExists(socketPath),
      pluginExistsWithCorrectUUID: (info: PluginInfo) => asw.pluginExistsWithCorrectUUID(info),
      get: (socketPath: string) => asw.get(socketPath),
    });

    this.ready = this.#ready.promise;
    // Nobody has to await `ready`; its rejection must not become an unhandled rejection.
    this.ready.catch(() => {});
  }

  get state(): LifecycleState {
    if (this.#stopPromise !== undefined) return this.#stopped ? 'stopped' : 'stopping';
    if (this.#startPromise === undefined) return 'new';
    return this.#started ? 'running' : 'starting';
  }

  addHandler(type: string, handler: PluginHandler): void {
    this.#handlers.add(type, handler);
  }

  removeHandler(type: string): boolean {
    return this.#handlers.remove(type);
  }

  handlerTypes(): string[] {
    return this.#handlers.types();
  }

  start(signal?: AbortSignal): Promise<void> {
    if (this.#stopPromise !== undefined) {
      return Promise.reject(new BerthError('BERTH_SHUT_DOWN', 'plugin manager is stopped; create a new one'));
    }
    this.#startPromise ??= this.#start(signal);
    return this.#startPromise;
  }

  async #start(signal: AbortSignal | undefined): Promise<void> {
    try {
      if (signal?.aborted) throw new BerthError('BERTH_ABORTED', 'plugin manager start: aborted');
      signal?.addEventListener('abort', () => void this.stop(), { once: true });
      this.#unsubscribe.push(
        this.#dsw.onChange((socketPath) => this.#onDesiredChange(socketPath)),
        this.#executor.addListener((event) => {
          this.#onOperation(event);
          // The last running operation settled: open the liveness connections a storm held back.
          if (this.#executor.running === 0) this.#liveness?.connectWaiting();
        }),
      );
      // The reconciler first, so it is awake for every socket the first scan finds.
      await this.#reconciler.start();
      await this.#liveness?.start();
      await this.#watcher.start();
      this.#logger.info({ pluginsDir: this.#options.pluginsDir, mode: this.#mode }, 'plugin manager started');
      this.#started = true;
      this.#ready.resolve();
    } catch (err) {
      this.#ready.reject(err);
      await this.stop();
      throw err;
    }
  }

  stop(): Promise<void> {
    this.#stopPromise ??= this.#stop();
    return this.#stopPromise;
  }

  async #stop(): Promise<void> {
    await this.#watcher.stop();
    await this.#liveness?.stop();
    await this.#reconciler.stop();
    await this.#executor.stop();
    for (const off of this.#unsubscribe.splice(0)) off();
    this.#metrics.unregister();
    this.#ready.reject(new BerthError('BERTH_SHUT_DOWN', 'plugin manager was stopped before it was ready'));
    this.#stopped = true;
    this.#logger.info('plugin manager stopped');
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.stop();
  }

  rescan(): Promise<void> {
    return this.#watcher.rescan();
  }

  retryStorageFailures(): number {
    const reset = this.#reconciler.retryFailed((error) => causedBy(error, 'BERTH_STORAGE_FAILED'));
    if (reset > 0)
      this.#logger.info({ sockets: reset }, 'storage works again: retrying the registrations it refused');
    return reset;
  }

  sockets(): SocketStatus[] {
    this.#pruneDead();
    return socketStatuses({
      now: this.#clock.now(),
      desired: this.#dsw.getPluginsToRegister(),
      registered: this.#asw.getRegisteredPlugins(),
      operation: (socketPath) => this.#executor.status(socketPath),
      dead: this.#dead,
      registeredAt: this.#registeredAt,
      mode: this.#mode,
      nextRecoveryProbe: (path) => this.#liveness?.nextRecoveryProbe(path),
    });
  }

  socket(socketPath: string): SocketStatus | undefined {
    const wanted = this.#dsw.get(socketPath);
    const actual = this.#asw.get(socketPath);
    const dead = this.#dead.get(socketPath);
    if (wanted === undefined && actual === undefined && dead === undefined) return undefined;
    return socketStatuses({
      now: this.#clock.now(),
      desired: wanted === undefined ? [] : [wanted],
      registered: actual === undefined ? [] : [actual],
      operation: (path) => this.#executor.status(path),
      dead: dead === undefined ? new Map() : new Map([[socketPath, dead]]),
      registeredAt: this.#registeredAt,
      mode: this.#mode,
      nextRecoveryProbe: (path) => this.#liveness?.nextRecoveryProbe(path),
    })[0];
  }

  liveSocketPaths(): Set<string> {
    return new Set(this.#asw.getRegisteredPlugins().map((p) => p.socketPath));
  }

  subscribe(listener: (event: PluginEvent) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  #emit(event: PluginEvent): void {
    for (const listener of [...this.#listeners]) {
      try {
        listener(event);
      } catch (err) {
        this.#logger.error({ err }, `plugin event listener threw: ${errorMessage(err)}`);
      }
    }
  }

  #onDesiredChange(socketPath: string): void {
    const at = this.#clock.now();
    if (this.#dsw.pluginExists(socketPath)) {
      // A new socket file at this path: whatever liveness decided was about the old one.
      this.#dead.delete(socketPath);
      this.#emit({ type: 'discovered', at, socketPath });
    } else if (this.#livenessRemovals.delete(socketPath)) {
      // Reported as 'failed' by #onDead.
    } else {
      this.#emit({ type: 'socket-removed', at, socketPath });
    }
  }

  #onOperation(event: OperationEvent): void {
    if (!('error' in event) || event.error.code !== 'BERTH_SHUT_DOWN') this.#metrics.recordOperation(event);
    switch (event.type) {
      case 'register-succeeded': {
        this.#registeredAt.set(event.socketPath, {
          uuid: event.plugin.uuid,
          at: event.at,
          attempts: event.attempts,
        });
        const plugin = registeredPlugin(event.plugin, event.at, this.#mode);
        this.#logger.info(
          {
            socketPath: event.socketPath,
            type: plugin.type,
            name: plugin.name,
            durationMs: event.durationMs,
          },
          this.#mode === 'observe' ? 'plugin observed' : 'plugin registered',
        );
        this.#liveness?.watch(event.plugin);
        this.#callback(() => this.#options.onRegistered?.(plugin));
        return;
      }
      case 'unregister-succeeded': {
        this.#liveness?.unwatch(event.socketPath, event.plugin.uuid);
        const since = this.#registeredAt.get(event.socketPath);
        if (since?.uuid === event.plugin.uuid) this.#registeredAt.delete(event.socketPath);
        const plugin = registeredPlugin(event.plugin, since?.at ?? event.at, this.#mode);
        const reason = this.#deregistrationReason(event.plugin);
        this.#logger.info(
          { socketPath: event.socketPath, type: plugin.type, name: plugin.name, reason },
          'plugin deregistered',
        );
        this.#callback(() => this.#options.onDeregistered?.(plugin, reason));
        return;
      }
      case 'register-failed':
      case 'unregister-failed': {
        // An attempt cut short by stop() is not a plugin failure.
        if (event.error.code === 'BERTH_SHUT_DOWN') return;
        const failed: PluginEvent = {
          type: 'failed',
          at: event.at,
          socketPath: event.socketPath,
          error: { code: event.error.code, message: event.error.message },
          retryAt: event.retryAt,
          attempts: event.attempts,
        };
        const plugin =
          event.type === 'register-failed'
            ? event.plugin
            : event.plugin.type !== undefined && event.plugin.name !== undefined
              ? { type: event.plugin.type, name: event.plugin.name }
              : undefined;
        if (plugin !== undefined) failed.plugin = plugin;
        if (this.#logFailures) {
          this.#logger.warn(
            {
              socketPath: event.socketPath,
              code: event.error.code,
              retryAt: event.retryAt === null ? null : new Date(event.retryAt).toISOString(),
              attempts: event.attempts,
            },
            event.error.message,
          );
        }
        this.#emit(failed);
        return;
      }
    }
  }

  #deregistrationReason(plugin: PluginInfo): DeregistrationReason {
    if (this.#dead.get(plugin.socketPath)?.uuid === plugin.uuid) return 'liveness';
    return this.#dsw.pluginExists(plugin.socketPath) ? 'replaced' : 'socket-removed';
  }

  /**
   * Liveness gave up on a registered plugin whose socket file is still there:
   * take it out of the desired state so the reconciler deregisters it. The
   * watcher does not re-add a socket it already reported, so only a new
   * socket file at the path (a new generation) registers again.
   */
  #onDead(plugin: PluginInfo, error: BerthError, failures: number): void {
    const socketPath = plugin.socketPath;
    // The probe raced with a change of generation: nothing to do for the old one.
    if (!this.#asw.pluginExistsWithCorrectUUID(plugin) || this.#dsw.get(socketPath)?.uuid !== plugin.uuid)
      return;
    const at = this.#clock.now();
    const dead: DeadSocket = {
      uuid: plugin.uuid,
      foundInDeprecatedDir: plugin.foundInDeprecatedDir,
      error,
      failures,
      at,
    };
    if (plugin.type !== undefined && plugin.name !== undefined)
      dead.plugin = { type: plugin.type, name: plugin.name };
    this.#dead.set(socketPath, dead);
    this.#metrics.recordLivenessFailure();
    if (this.#logFailures) this.#logger.warn({ socketPath, failures }, error.message);
    this.#livenessRemovals.add(socketPath);
    this.#dsw.removePlugin(socketPath);
    const failed: PluginEvent = {
      type: 'failed',
      at,
      socketPath,
      error: { code: error.code, message: error.message },
      retryAt: null,
      attempts: failures,
    };
    if (dead.plugin !== undefined) failed.plugin = dead.plugin;
    this.#emit(failed);
  }

  /**
   * A plugin that liveness gave up on answers again on the same socket file:
   * put that socket back into the desired state as a new generation, so it
   * goes through validate and register again (the upstream monitor's rule).
   */
  #onAlive(socketPath: string): void {
    const dead = this.#dead.get(socketPath);
    if (dead === undefined || this.#dsw.pluginExists(socketPath)) return;
    if (!this.#watcher.knownSockets().includes(socketPath)) return; // the file went meanwhile
    this.#logger.info(
      { socketPath },
      `plugin at ${socketPath} answers again after liveness gave up: registering it`,
    );
    this.#dsw.addOrUpdatePlugin(socketPath, { foundInDeprecatedDir: dead.foundInDeprecatedDir });
  }

  /** Forgets dead plugins whose socket file is gone (the watcher no longer knows it). */
  #pruneDead(): void {
    if (this.#dead.size === 0) return;
    const known = new Set(this.#watcher.knownSockets());
    for (const socketPath of this.#dead.keys()) {
      if (!known.has(socketPath) && !this.#dsw.pluginExists(socketPath)) this.#dead.delete(socketPath);
    }
  }

  #callback(call: () => void): void {
    try {
      call();
    } catch (err) {
      this.#logger.error({ err }, `plugin manager callback threw: ${errorMessage(err)}`);
    }
  }
}

function registeredPlugin(info: PluginInfo, registeredAt: number, mode: BerthMode): RegisteredPlugin {
  return {
    socketPath: info.socketPath,
    type: info.type ?? '',
    name: info.name ?? '',
    endpoint: info.endpoint ?? info.socketPath,
    versions: [...(info.supportedVersions ?? [])],
    uuid: info.uuid,
    foundInDeprecatedDir: info.foundInDeprecatedDir,
    registeredAt,
    observed: mode === 'observe',
  };
}

/** Whether `code` is the error's own or one of its causes' (a handler's failure wraps the registry's). */
function causedBy(error: unknown, code: string): boolean {
  for (let e: unknown = error, depth = 0; e instanceof Error && depth < 8; e = e.cause, depth++) {
    if ((e as { code?: unknown }).code === code) return true;
  }
  return false;
}
