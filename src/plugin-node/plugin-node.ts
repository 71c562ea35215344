import {
  BerthError,
  DEFAULT_BERTH_MODE,
  type Lifecycle,
  LifecycleComponent,
  type PluginInstanceInfo,
  silentLogger,
  systemClock,
} from '../common/index.js';
import type { BuiltinHandlerSet, InstanceRef, PluginHandler } from '../handlers/index.js';
import { createPluginManager, type PluginManager } from '../plugin-manager/index.js';
import {
  createGrpcDispenser,
  createRegistry,
  createRegistryBridge,
  type GrpcDispenser,
  type Registry,
  type RegistryBridge,
} from '../registry/index.js';
import { buildNodeHandlers, configuredTypes, type NodeHandlers } from './node-handlers.js';
import { DEFAULT_RESTORE_SETTLE_TIMEOUT_MS, type PluginNodeOptions } from './plugin-node-options.js';
import { waitForRestoredSockets } from './restore-settle.js';

/**
 * berth's core as a library, and the daemon's core: the plugin manager
 * (watcher, reconciler, executor, liveness), the dynamic registry, the bridge
 * between them, the handlers (built-in ones loaded lazily), the gRPC
 * dispenser, and restore settling, behind one lifecycle.
 *
 * Start: the plugin manager's first directory scan, then a wait until every
 * restored plugin whose socket is still there has settled (confirmed by a
 * fresh handshake, or failed), then the restored instances nobody confirmed
 * are dropped. So after a restart a live plugin keeps its registry entry with
 * no deregistered/registered pair, and a plugin whose socket went while berth
 * was down is removed after the first scan.
 */
export interface PluginNode extends Lifecycle {
  readonly registry: Registry;
  readonly manager: PluginManager;
  /** Adds (or replaces) the handler of a type. */
  addHandler(type: string, handler: PluginHandler): void;
  /** The handler that records plugins of `type` in the registry (what a validating handler delegates to). */
  registryHandler(type: string): PluginHandler;
  /** Merges a handler's facts into a registry instance's options (see RegistryBridge.recordFacts). */
  recordFacts(instance: InstanceRef, facts: Readonly<Record<string, string>>): void;
  /** Restored instances dropped at the last start because their socket was gone or never answered. */
  readonly droppedAtStart: readonly PluginInstanceInfo[];
  /** The built-in handlers (option `builtinHandlers`), built once start has loaded them. */
  readonly builtin: BuiltinHandlerSet | undefined;
  /** Every plugin type with a handler built from the options (built-in, versioned, factories). */
  readonly handlerTypes: readonly string[];
  /** A new version list for a versioned handler (a config reload); later registrations are checked against it. */
  setHandlerVersions(type: string, versions: readonly string[]): void;
}

export function createPluginNode(options: PluginNodeOptions): PluginNode {
  return new BerthPluginNode(options);
}

class BerthPluginNode extends LifecycleComponent implements PluginNode {
  readonly registry: Registry;
  readonly manager: PluginManager;
  droppedAtStart: readonly PluginInstanceInfo[] = [];
  readonly #bridge: RegistryBridge;
  readonly #options: PluginNodeOptions;
  readonly #settled = new Set<(socketPath: string) => void>();
  readonly #grpc: GrpcDispenser | undefined;
  readonly handlerTypes: readonly string[];
  #handlers: NodeHandlers | undefined;

  constructor(options: PluginNodeOptions) {
    super();
    this.#options = options;
    const clock = options.clock ?? systemClock;
    const logger = options.logger ?? silentLogger;
    const {
      storage,
      handlers,
      dispensers,
      defaultDispenser,
      subscriberQueueSize,
      onEvent,
      restoreSettleTimeoutMs,
      builtinHandlers,
      handlerVersions,
      grpcDispenser,
      ...managerOptions
    } = options;
    if (
      restoreSettleTimeoutMs !== undefined &&
      !(Number.isFinite(restoreSettleTimeoutMs) && restoreSettleTimeoutMs > 0)
    ) {
      throw new BerthError(
        'BERTH_INVALID_ARGUMENT',
        `plugin node: restoreSettleTimeoutMs must be a positive number of milliseconds, got ${String(restoreSettleTimeoutMs)}`,
      );
    }
    this.handlerTypes = configuredTypes(builtinHandlers, handlerVersions ?? {}, handlers ?? {});
    // One gRPC dispenser serves every handler type; it watches the registry to close clients of
    // instances that went away.
    this.#grpc =
      grpcDispenser === true
        ? createGrpcDispenser({ logger: logger.child({ component: 'dispenser' }) })
        : undefined;
    const grpc = this.#grpc;
    const allDispensers =
      grpc === undefined
        ? dispensers
        : { ...Object.fromEntries(this.handlerTypes.map((type) => [type, grpc.dispenser])), ...dispensers };
    this.registry = createRegistry({
      ...(storage === undefined ? {} : { storage }),
      ...(allDispensers === undefined ? {} : { dispensers: allDispensers }),
      ...(defaultDispenser === undefined ? {} : { defaultDispenser }),
      ...(subscriberQueueSize === undefined ? {} : { subscriberQueueSize }),
      clock,
      logger: logger.child({ component: 'registry' }),
      ...(onEvent === undefined ? {} : { onEvent }),
      // Registrations refused while writes failed are retried at once, not after their backoff.
      onStorageRecovered: () => this.manager.retryStorageFailures(),
    });
    grpc?.attach(this.registry);
    this.#bridge = createRegistryBridge({
      registry: this.registry,
      logger: logger.child({ component: 'bridge' }),
    });
    const settled = (socketPath: string) => {
      for (const listener of this.#settled) listener(socketPath);
    };
    this.manager = createPluginManager({
      ...managerOptions,
      clock,
      logger,
      onEvent: (event) => {
        // The registry reports the instances themselves; the node passes on the socket events.
        if (event.type !== 'plugin-registered' && event.type !== 'plugin-deregistered') onEvent?.(event);
        settled(event.socketPath);
      },
    });
    for (const [type, factory] of Object.entries(handlers ?? {})) {
      this.manager.addHandler(type, factory(this.#bridge.handlerFor(type)));
    }
  }

  protected override onStart(signal: AbortSignal): Promise<void> | void {
    return this.#start(signal);
  }

  protected override async onStop(): Promise<void> {
    await this.manager.stop();
    await this.registry.stop();
    await Promise.all(Object.values(this.#handlers?.builtin ?? {}).map((handler) => handler.stop?.()));
    await this.#grpc?.stop();
  }

  get builtin(): BuiltinHandlerSet | undefined {
    return this.#handlers?.builtin;
  }

  setHandlerVersions(type: string, versions: readonly string[]): void {
    this.#handlers?.versions.set(type, [...versions]);
  }

  addHandler(type: string, handler: PluginHandler): void {
    this.manager.addHandler(type, handler);
  }

  registryHandler(type: string): PluginHandler {
    return this.#bridge.handlerFor(type);
  }

  recordFacts(instance: InstanceRef, facts: Readonly<Record<string, string>>): void {
    this.#bridge.recordFacts(instance, facts);
  }

  /** Loads and builds the handlers the options name, starts the built-in ones, and hands all to the manager. */
  async #startHandlers(signal: AbortSignal): Promise<void> {
    const options = this.#options;
    const logger = options.logger ?? silentLogger;
    this.#handlers = await buildNodeHandlers({
      builtin: options.builtinHandlers,
      versions: options.handlerVersions ?? {},
      mode: options.mode ?? DEFAULT_BERTH_MODE,
      logger,
      clock: options.clock ?? systemClock,
      emit: (event) => options.onEvent?.(event),
      recordFacts: (instance, facts) => this.recordFacts(instance, facts),
      delegateFor: (type) => this.registryHandler(type),
    });
    for (const handler of Object.values(this.#handlers.builtin ?? {})) {
      if (signal.aborted) return;
      await handler.start?.(signal);
    }
    for (const [type, handler] of this.#handlers.all) this.manager.addHandler(type, handler);
  }

  async #start(signal: AbortSignal): Promise<void> {
    await this.#startHandlers(signal);
    if (signal.aborted) return;
    // Restores from storage (a storage started by the caller was restored at construction).
    await this.registry.start(signal);
    this.#bridge.captureRestored();
    const restored = new Set(this.#bridge.unconfirmed().map((info) => info.allocId));
    await this.manager.start(signal);
    // Restored instances are kept only if their plugin answers again.
    await waitForRestoredSockets({
      state: (socketPath) => this.manager.socket(socketPath)?.state,
      restored,
      onChange: (listener) => {
        this.#settled.add(listener);
        return () => this.#settled.delete(listener);
      },
      clock: this.#options.clock ?? systemClock,
      timeoutMs: this.#options.restoreSettleTimeoutMs ?? DEFAULT_RESTORE_SETTLE_TIMEOUT_MS,
      signal,
    });
    if (signal.aborted) return;
    this.droppedAtStart = await this.#bridge.reconcileRestored(this.manager.liveSocketPaths());
    if (this.droppedAtStart.length > 0) {
      (this.#options.logger ?? silentLogger).info(
        { removed: this.droppedAtStart.length },
        'dropped restored plugins whose socket is gone',
      );
    }
  }
}
