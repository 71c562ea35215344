import { Registry } from 'prom-client';
import {
  BerthError,
  type BerthMode,
  type Clock,
  LifecycleComponent,
  type Logger,
  silentLogger,
  systemClock,
} from '../common/index.js';
import type { OperationEvent } from '../executor/index.js';
import type { PluginHandler } from '../handlers/index.js';
import { dialRegistration } from '../registration/registrar.js';
import { EventChannel } from './event-channel.js';
import { createPluginManagerMetrics, type PluginManagerMetrics } from './metrics.js';
import { causedBy, failedEvent, registeredPlugin } from './operation-events.js';
import { buildPipeline, type Pipeline } from './pipeline.js';
import { SocketLiveness } from './socket-liveness.js';
import { socketStatuses } from './socket-status.js';
import type {
  ActualStateView,
  DesiredStateView,
  PluginManager,
  PluginManagerEvent,
  PluginManagerOptions,
  PluginManagerSubscribeOptions,
  SocketStatus,
} from './types.js';

export function createPluginManager(options: PluginManagerOptions): PluginManager {
  return new BerthPluginManager(options);
}

/**
 * The composition root of plugin registration (kubelet plugin_manager.go):
 *
 *   watcher -> desired state -(wake)-> reconciler -> executor -> handler
 *                                          ^                      |
 *      socket liveness (removes dead plugins from the desired state)
 *
 * It only wires: the parts keep their own state, and every outcome leaves as
 * one PluginManagerEvent (onEvent and subscribe). The kubelet ignores the
 * watcher's start error and polls the reconciler every second; berth fails
 * start() when the directory cannot be watched and reconciles on every change.
 */
class BerthPluginManager extends LifecycleComponent implements PluginManager {
  readonly ready: Promise<void>;
  readonly desiredState: DesiredStateView;
  readonly actualState: ActualStateView;
  readonly metricsRegistry: Registry;

  readonly #clock: Clock;
  readonly #logger: Logger;
  readonly #logFailures: boolean;
  readonly #pluginsDir: string;
  readonly #mode: BerthMode;
  readonly #parts: Pipeline;
  readonly #liveness: SocketLiveness;
  readonly #metrics: PluginManagerMetrics;
  readonly #events: EventChannel<PluginManagerEvent>;
  readonly #unsubscribe: Array<() => void> = [];
  #markReady: { resolve: () => void; reject: (err: unknown) => void } | undefined;

  constructor(options: PluginManagerOptions) {
    super();
    const clock = options?.clock ?? systemClock;
    const base = options?.logger ?? silentLogger;
    const dial = options?.dial ?? dialRegistration;
    // A registered plugin's handshake connection becomes its liveness connection.
    const pipeline = buildPipeline(options, clock, base, dial, (socketPath, uuid, connection) =>
      this.#liveness.adopt(socketPath, uuid, connection),
    );
    this.#parts = pipeline;
    this.desiredState = pipeline.desiredView;
    this.actualState = pipeline.actualView;
    this.#mode = pipeline.mode;
    this.#pluginsDir = options.pluginsDir;
    this.#clock = clock;
    this.#logger = base.child({ component: 'plugin-manager' });
    this.#logFailures = options.logFailures ?? true;
    this.#events = new EventChannel(options.onEvent, this.#logger);
    const { desired, actual } = pipeline;
    this.#liveness = new SocketLiveness({
      liveness: options.liveness,
      clock,
      logger: base,
      managerLogger: this.#logger,
      logFailures: this.#logFailures,
      dial,
      desiredState: desired,
      actualState: actual,
      executor: this.#parts.executor,
      knownSockets: () => this.#parts.watcher.knownSockets(),
      recordFailure: () => this.#metrics.recordLivenessFailure(),
      emit: (event) => this.#events.emit(event),
    });
    this.metricsRegistry = options.metricsRegistry ?? new Registry();
    this.#metrics = createPluginManagerMetrics({
      registry: this.metricsRegistry,
      desiredState: desired,
      actualState: actual,
    });
    this.ready = new Promise<void>((resolve, reject) => {
      this.#markReady = { resolve, reject };
    });
    // Nobody has to await `ready`; its rejection must not become an unhandled rejection.
    this.ready.catch(() => {});
  }

  /** Resolves after the first directory scan; a stopped manager refuses (create a new one). */
  override start(signal?: AbortSignal): Promise<void> {
    if (this.stopBegun) {
      return Promise.reject(new BerthError('BERTH_SHUT_DOWN', 'plugin manager is stopped; create a new one'));
    }
    return super.start(signal);
  }

  protected override async onStart(): Promise<void> {
    try {
      this.#unsubscribe.push(
        this.#parts.desired.onChange((socketPath) => this.#onDesiredChange(socketPath)),
        this.#parts.executor.addListener((event) => {
          this.#onOperation(event);
          // The last running operation settled: open the liveness connections a storm held back.
          if (this.#parts.executor.running === 0) this.#liveness.connectWaiting();
        }),
      );
      // The reconciler first, so it is awake for every socket the first scan finds.
      await this.#parts.reconciler.start();
      await this.#liveness.start();
      await this.#parts.watcher.start();
    } catch (err) {
      this.#markReady?.reject(err);
      throw err;
    }
    this.#logger.info({ pluginsDir: this.#pluginsDir, mode: this.#mode }, 'plugin manager started');
    this.#markReady?.resolve();
  }

  protected override async onStop(): Promise<void> {
    await this.#parts.watcher.stop();
    await this.#liveness.stop();
    await this.#parts.reconciler.stop();
    await this.#parts.executor.stop();
    for (const off of this.#unsubscribe.splice(0)) off();
    this.#events.close();
    this.#metrics.unregister();
    this.#markReady?.reject(
      new BerthError('BERTH_SHUT_DOWN', 'plugin manager was stopped before it was ready'),
    );
    this.#logger.info('plugin manager stopped');
  }

  addHandler(type: string, handler: PluginHandler): void {
    this.#parts.handlers.add(type, handler);
  }

  removeHandler(type: string): boolean {
    return this.#parts.handlers.remove(type);
  }

  handlerTypes(): string[] {
    return this.#parts.handlers.types();
  }

  rescan(): Promise<void> {
    return this.#parts.watcher.rescan();
  }

  retryStorageFailures(): number {
    const reset = this.#parts.reconciler.retryFailed((error) => causedBy(error, 'BERTH_STORAGE_FAILED'));
    if (reset > 0)
      this.#logger.info({ sockets: reset }, 'storage works again: retrying the registrations it refused');
    return reset;
  }

  sockets(): SocketStatus[] {
    const { known: _, ...liveness } = this.#liveness.statusInputs();
    return socketStatuses({
      ...liveness,
      now: this.#clock.now(),
      desired: this.#parts.desired.getPluginsToRegister(),
      registered: this.#parts.actual.getRegisteredPlugins(),
      operation: (socketPath) => this.#parts.executor.status(socketPath),
      mode: this.#mode,
    });
  }

  socket(socketPath: string): SocketStatus | undefined {
    const wanted = this.#parts.desired.get(socketPath);
    const actual = this.#parts.actual.get(socketPath);
    const { known, ...liveness } = this.#liveness.statusInputs(socketPath);
    if (wanted === undefined && actual === undefined && !known) return undefined;
    return socketStatuses({
      ...liveness,
      now: this.#clock.now(),
      desired: wanted === undefined ? [] : [wanted],
      registered: actual === undefined ? [] : [actual],
      operation: (path) => this.#parts.executor.status(path),
      mode: this.#mode,
    })[0];
  }

  liveSocketPaths(): Set<string> {
    return new Set(this.#parts.actual.getRegisteredPlugins().map((p) => p.socketPath));
  }

  subscribe(options: PluginManagerSubscribeOptions = {}): AsyncIterable<PluginManagerEvent> {
    return this.#events.subscribe(options);
  }

  #onDesiredChange(socketPath: string): void {
    const change = this.#liveness.desiredChanged(socketPath);
    // A liveness removal was reported as 'failed' when liveness gave up.
    if (change !== 'liveness-removal') this.#events.emit({ type: change, at: this.#clock.now(), socketPath });
  }

  #onOperation(event: OperationEvent): void {
    if (!('error' in event) || event.error.code !== 'BERTH_SHUT_DOWN') this.#metrics.recordOperation(event);
    const { socketPath } = event;
    switch (event.type) {
      case 'register-succeeded': {
        this.#liveness.registered(event.plugin, event.at, event.attempts);
        const plugin = registeredPlugin(event.plugin, event.at, this.#mode);
        this.#logger.info(
          { socketPath, type: plugin.type, name: plugin.name, durationMs: event.durationMs },
          this.#mode === 'observe' ? 'plugin observed' : 'plugin registered',
        );
        this.#events.emit({ type: 'plugin-registered', at: event.at, socketPath, plugin });
        return;
      }
      case 'unregister-succeeded': {
        const { registeredAt, reason } = this.#liveness.deregistered(event.plugin);
        const plugin = registeredPlugin(event.plugin, registeredAt ?? event.at, this.#mode);
        this.#logger.info(
          { socketPath, type: plugin.type, name: plugin.name, reason },
          'plugin deregistered',
        );
        this.#events.emit({ type: 'plugin-deregistered', at: event.at, socketPath, plugin, reason });
        return;
      }
      case 'register-failed':
      case 'unregister-failed':
        // An attempt cut short by stop() is not a plugin failure.
        if (event.error.code === 'BERTH_SHUT_DOWN') return;
        this.#events.emit(failedEvent(event, this.#logFailures ? this.#logger : undefined));
        return;
    }
  }
}
