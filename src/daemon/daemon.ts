import { mkdirSync } from 'node:fs';
import type { Server } from 'node:http';
import { dirname, join } from 'node:path';
import { Registry as MetricsRegistry } from 'prom-client';
import type { ClusterEvent } from '../cluster/index.js';
import {
  BerthError,
  type Clock,
  errorMessage,
  LifecycleComponent,
  type Logger,
  systemClock,
} from '../common/index.js';
import { CSI_DEFAULTS } from '../handlers/csi/index.js';
import { BUILTIN_HANDLER_TYPES, type BuiltinHandlerSet, builtinHandlers } from '../handlers/index.js';
import type { ObjectManagers, ObjectSource, Pod as ObjectsPod } from '../objects/index.js';
import type { PluginManager } from '../plugin-manager/index.js';
import { createPluginNode, type PluginNode } from '../plugin-node/index.js';
import { restoreSettleTimeoutMs } from '../plugin-node/plugin-node-options.js';
import type { Registry } from '../registry/index.js';
import { createSqliteStorage, type SqliteStorage, type StorageCorruptionReport } from '../storage/index.js';
import { createPodVolumeHook, VOLUMES_DEFAULTS, VolumeManager } from '../volumes/index.js';
import { claimApiSocket, closeServer } from './api/api-listener.js';
import { type ApiApp, createApiApp } from './api/api-server.js';
import type { ApiBackend, SocketStatus } from './api/api-types.js';
import { startingHandler, switchableHandler } from './api/starting-handler.js';
import { recordApiAddresses, removeApiAddresses } from './api-address-file.js';
import { createApiLimitMetrics, serveApi } from './api-exposure.js';
import type { DaemonCluster } from './cluster-setup.js';
import type { DaemonConfig } from './config/config.js';
import { dataDirLayout } from './config/defaults.js';
import { formatHostPort, type TcpAddress } from './config/listen-address.js';
import { type ObjectLimits, objectLimitsOf } from './config-reload.js';
import { EventBus } from './event-bus.js';
import { createEventLog } from './event-log.js';
import { ensurePrivateDirectory, ensurePrivateFile, ensureRuntimeDirectory } from './file-modes.js';
import { registerHandlerMetrics } from './handler-metrics.js';
import { refuseKubeletDirectory } from './kubelet-check.js';
import { meteredReader, meteredSource } from './metered-objects.js';
import { createDaemonMetrics, type DaemonMetrics } from './metrics.js';
import { createConfiguredSource } from './object-source.js';
import { createPodRegistry } from './pod-registry.js';
import { pluginsDirProblem, Readiness } from './readiness.js';
import { acquireRegistrarLock, type RegistrarLock } from './registrar-lock.js';
import { buildStatus } from './status.js';
import { type StoppableChild, stopInReverse } from './stop-in-reverse.js';
import { berthVersion } from './version.js';

export interface DaemonDeps {
  logger: Logger;
  clock?: Clock;
  /** Lines lost by the process's log sinks, by stream (`berth_log_lines_dropped_total`). */
  logLinesDropped?: () => Record<string, number>;
}

/** Where the API can be reached once the daemon has started. */
export interface ApiAddress {
  socketPath: string;
  /** Present with `listen`; the real port when port 0 was asked for. */
  tcp?: TcpAddress;
}

/**
 * berth's one composition root, on the lifecycle contract
 * (common/lifecycle.ts): new → starting → running → stopping → stopped. A
 * failed start cleans up what it had opened and ends in `stopped` (start
 * throws); aborting start's signal stops the daemon. `ready` is true while it
 * runs with its API serving (the state /v1/status calls 'ready').
 * Start order: claim the API socket → object
 * source (constructed only) → storage → gRPC dispenser → plugin node
 * (registry, plugin manager, bridge) → built-in handlers → the node's start
 * (first scan, restored instances confirmed or dropped) → cluster view (when
 * configured) → object manager → API → ready. Stop runs it backwards under
 * the shutdown deadline; nothing acknowledged is lost because a registration
 * is durable before its plugin hears Notify(true), and berth's own shutdown
 * never deregisters anything (the plugin manager does not roll back an
 * attempt that its stop cut short).
 */
export class Daemon extends LifecycleComponent {
  readonly config: DaemonConfig;
  readonly #logger: Logger;
  readonly #clock: Clock;
  readonly #startedAt: number;
  readonly #version = berthVersion();
  readonly #abort = new AbortController();
  /** Set once start has finished; stays set through stop (`ready` reads the state too). */
  #started = false;

  readonly #metrics: DaemonMetrics;
  readonly #apiLimits: ReturnType<typeof createApiLimitMetrics>;
  readonly #bus: EventBus;
  /** The cluster view's changes, with ids, for GET /v1/cluster/events. */
  readonly #clusterBus: EventBus<ClusterEvent>;
  /** Set while `<data-dir>/api-address` is ours to remove. */
  #recordedAddress = false;
  #storage: SqliteStorage | undefined;
  #corruption: StorageCorruptionReport | undefined;
  #registry: Registry | undefined;
  #node: PluginNode | undefined;
  #source: ObjectSource | undefined;
  #objects: ObjectManagers | undefined;
  #volumes: VolumeManager | undefined;
  #api: ApiApp | undefined;
  #servers: Server[] = [];
  /** What the listeners serve: the starting handler, then the full API. */
  readonly #requests = switchableHandler(startingHandler());
  #apiAddress: ApiAddress | undefined;
  #cluster: DaemonCluster | undefined;
  #lock: RegistrarLock | undefined;
  /** The last time the state database vanished and was re-created from memory. */
  #recreated: { at: number; message: string } | undefined;
  /** The object settings a SIGHUP may change in place (setObjectLimits); read at each use. */
  #objectLimits: ObjectLimits;
  /** berth's one notion of ready: /readyz, /readyz?verbose and /v1/status read it. */
  readonly readiness: Readiness;

  constructor(config: DaemonConfig, deps: DaemonDeps) {
    super();
    this.config = config;
    this.#objectLimits = objectLimitsOf(config.objects);
    this.#logger = deps.logger;
    this.#clock = deps.clock ?? systemClock;
    this.#startedAt = this.#clock.now();
    const logEvent = createEventLog(this.#logger, this.#clock);
    this.#bus = new EventBus({
      clock: this.#clock,
      ringSize: config.api.eventRingSize,
      onPublish: (event) => {
        this.#metrics.countEvent(event);
        logEvent(event);
      },
    });
    this.#clusterBus = new EventBus<ClusterEvent>({ clock: this.#clock, ringSize: config.api.eventRingSize });
    this.#metrics = createDaemonMetrics({
      registry: new MetricsRegistry(),
      sseClients: () => this.#bus.subscriberCount + this.#clusterBus.subscriberCount,
      ...(deps.logLinesDropped === undefined ? {} : { logLinesDropped: deps.logLinesDropped }),
      version: this.#version,
    });
    this.#apiLimits = createApiLimitMetrics(this.#metrics.registry);
    this.readiness = new Readiness({
      clock: this.#clock,
      logger: this.#logger,
      checks: [
        {
          name: 'started',
          problem: () => {
            if (this.ready) return undefined;
            return this.state === 'new' || this.state === 'starting'
              ? 'restoring state and scanning plugins'
              : 'shutting down';
          },
        },
        { name: 'plugins-dir', problem: () => pluginsDirProblem(this.config.pluginsDir) },
        {
          name: 'storage',
          problem: () => {
            const health = this.#registry?.storageHealth();
            if (health?.state !== 'failing') return undefined;
            return `registry writes are failing: ${health.lastError.message}`;
          },
        },
      ],
    });
  }

  get #apiAddressPath(): string {
    return dataDirLayout(this.config.dataDir).apiAddressPath;
  }

  /** True from the end of a successful start until stop begins: the API serves, plugins are scanned. */
  get ready(): boolean {
    return this.#started && this.state === 'running';
  }

  /** Where the API listens; throws before start() has finished. */
  get apiAddress(): ApiAddress {
    if (!this.#apiAddress) throw new BerthError('BERTH_NOT_READY', 'the daemon has not started its API yet');
    return this.#apiAddress;
  }

  /** The dynamic plugin registry (list, wait for, dispense, subscribe); throws before start(). */
  get registry(): Registry {
    if (!this.#registry)
      throw new BerthError('BERTH_NOT_READY', 'the daemon has not started its registry yet');
    return this.#registry;
  }

  protected override async onStart(): Promise<void> {
    try {
      await this.#start();
    } catch (err) {
      await this.stop();
      // A stop that ran while start was awaiting something may have missed what start made next.
      await this.#closeApi();
      await this.#lock?.release();
      throw err;
    }
    this.#started = true;
    this.#logger.info({ pluginsDir: this.config.pluginsDir, api: this.apiAddress }, 'berth is ready');
  }

  async #start(): Promise<void> {
    const { config } = this;
    const logger = this.#logger;
    const clock = this.#clock;
    ensurePrivateDirectory(config.dataDir, '--data-dir', logger);
    // An observer writes nothing into the directory it watches (it may be read-only to it).
    if (config.mode === 'registrar') makeDirectory(config.pluginsDir, 0o755, '--plugins-dir');
    const socketDir = dirname(config.apiSocketPath);
    if (socketDir !== config.dataDir) ensureRuntimeDirectory(socketDir, logger);
    // Before touching state: refuse early if another daemon owns this data directory,
    // then serve at once: alive, not ready (503) until the full API takes over below.
    await claimApiSocket(config.apiSocketPath);
    if (config.mode === 'registrar') await this.#claimPluginsDir();
    const served = await serveApi(this.#requests.handler, config, logger, this.#apiLimits, (server) =>
      this.#servers.push(server),
    );
    this.#apiAddress = {
      socketPath: config.apiSocketPath,
      ...(served.tcp === undefined ? {} : { tcp: served.tcp }),
    };
    // The CLI sends this data directory's token only to the addresses recorded here.
    if (served.tcp !== undefined) {
      recordApiAddresses(this.#apiAddressPath, [served.tcp]);
      this.#recordedAddress = true;
    }
    this.#stillStarting();

    // The object source is only constructed here (a bad kubeconfig fails before anything
    // else starts); it is used once the object manager starts below. Loaded on start only,
    // so the CLI's client commands, which import this folder, do not pay for it; the etcd
    // and Kubernetes clients are loaded only when configured.
    const objectsModule = await import('../objects/index.js');
    const configured = await createConfiguredSource(
      objectsModule.createDirectorySource,
      config.objects.source,
      clock,
      logger,
    );
    const source = meteredSource(configured, this.#metrics);
    this.#source = source; // owned (and closed by stop) before a stop can interrupt the start
    this.#stillStarting();

    // An observer persists nothing: what it shows is re-read from the directory at every
    // start, and a persisted record would claim the plugins were registered with berth.
    // The handlers' modules start loading now: run from dist/src, their files are read while
    // SQLite opens below (from the bundle, nothing is read and this only starts their
    // evaluation sooner). The plugin node's start then finds them loaded; a failed load is
    // reported there, when it loads them again.
    for (const type of BUILTIN_HANDLER_TYPES) builtinHandlers[type].load().catch(() => {});
    if (config.mode === 'registrar') {
      ensurePrivateFile(config.statePath, 'the state database');
      const storage = createSqliteStorage({
        path: config.statePath,
        logger: logger.child({ component: 'storage' }),
        clock,
        onCorrupt: (report) => {
          this.#corruption = report;
        },
      });
      this.#storage = storage;
      storage.onRecreated((error) => {
        this.#recreated = { at: clock.now(), message: error.message };
      });
      await storage.start();
    }

    // The library facade is the daemon's core: plugin manager, registry, bridge, the built-in and
    // configured handlers, the gRPC dispenser, restore settling. The daemon passes its config on.
    const node = createPluginNode({
      pluginsDir: config.pluginsDir,
      mode: config.mode,
      ...(config.deprecatedPluginsDir === undefined
        ? {}
        : { deprecatedPluginsDir: config.deprecatedPluginsDir }),
      ...(this.#storage === undefined ? {} : { storage: this.#storage }),
      builtinHandlers: { dataDir: config.dataDir, options: config.handlerOptions },
      handlerVersions: Object.fromEntries(config.handlers.map((h) => [h.type, h.versions])),
      grpcDispenser: true,
      subscriberQueueSize: config.registry.subscriberQueueSize,
      clock,
      logger,
      resyncPeriodMs: config.resyncPeriodMs,
      rescanIntervalMs: config.rescanIntervalMs,
      timeouts: config.timeouts,
      backoff: config.backoff,
      liveness: config.liveness,
      metricsRegistry: this.#metrics.registry,
      restoreSettleTimeoutMs: restoreSettleTimeoutMs(config.timeouts),
      onEvent: (event) => this.#bus.publish(event),
      // The event bus logs each 'failed' event (event-log.ts): once, not again here.
      logFailures: false,
    });
    this.#node = node;
    const registry = node.registry;
    this.#registry = registry;
    const pluginManager = node.manager;
    // The first scan, then restored instances are confirmed by their plugins or dropped.
    await node.start(this.#abort.signal);
    this.#stillStarting();
    const handlers = node.builtin as BuiltinHandlerSet;
    registerHandlerMetrics(this.#metrics.registry, {
      devices: handlers.DevicePlugin.manager,
      csi: handlers.CSIPlugin,
      dra: handlers.DRAPlugin,
    });

    // CSI volumes on the drivers the CSI handler registered (Controller calls to a csi-controller
    // plugin of the same name when one registered apart); publications are restored from their
    // own state file and checked against the mount table.
    const csi = handlers.CSIPlugin;
    const controllers = handlers['csi-controller'];
    const volumes = new VolumeManager({
      statePath: join(config.dataDir, VOLUMES_DEFAULTS.stateFileName),
      mountRoot: csi.options.mountRoot ?? join(config.dataDir, CSI_DEFAULTS.mountRootDirName),
      drivers: {
        lookup: (name) => {
          const nodePlugin = csi.lookupDriver(name);
          const controllerEndpoint = controllers.lookupController(name);
          return nodePlugin === undefined || controllerEndpoint === undefined
            ? nodePlugin
            : { ...nodePlugin, controllerEndpoint };
        },
        lookupController: (name) => controllers.lookupController(name),
      },
      callTimeoutMs: csi.options.callTimeoutMs,
      operationTimeoutMs: csi.options.operationTimeoutMs,
      clock,
      logger,
      // An observer mounts nothing: the kubelet owns the drivers' volumes.
      observe: config.mode === 'observe',
    });
    this.#volumes = volumes;
    await volumes.start(this.#abort.signal);
    this.#stillStarting();

    if (config.cluster) {
      // Publishes the settled registry to etcd and reads the fleet; never waits for etcd.
      const { startDaemonCluster } = await import('./cluster-setup.js');
      this.#cluster = await startDaemonCluster(config.cluster, {
        registry,
        metrics: this.#metrics.registry,
        clock,
        logger,
        version: this.#version,
      });
      this.#cluster.api.onEvent((event) => this.#clusterBus.publish(event));
      if (this.state !== 'starting') await this.#cluster.stop(); // a stop began meanwhile and missed it
      this.#stillStarting();
    }

    const objects = objectsModule.createObjectManagers({
      strategy: config.objects.strategy,
      source,
      clock,
      logger,
      ttlMs: config.objects.ttlMs,
      // Consulted at every freshness check, so a reloaded objects.ttl applies at once.
      getTtl: () => ({ ttlMs: this.#objectLimits.ttlMs }),
    });
    this.#objects = objects;
    objects.start();
    this.#metrics.setWatchCounter(() => {
      const stats = objects.stats();
      return { secrets: stats.secrets.watchesOpen, configmaps: stats.configMaps.watchesOpen };
    });

    this.#api = await createApiApp(
      this.#backend(registry, pluginManager, objects, objectsModule, handlers, volumes),
      {
        clock,
        logger: logger.child({ component: 'api' }),
        bodyLimitBytes: config.api.bodyLimitBytes,
        podBodyLimitBytes: config.objects.maxPodBytes,
        sseQueueSize: config.api.sseQueueSize,
        // A heartbeat well inside the idle timeout keeps idle event streams open.
        sseHeartbeatMs: Math.min(config.api.sseHeartbeatMs, Math.floor(config.api.idleTimeoutMs / 2)),
        maxEventStreams: config.api.maxEventStreams,
        eventStreamBufferBytes: config.api.eventStreamBufferBytes,
        onLimit: (what) => this.#apiLimits.hit(what === 'cap' ? 'event-streams' : 'lagged'),
        onAnswered: (route, method, status, seconds) =>
          this.#metrics.observeRequest(route, method, status, seconds),
      },
    );
    this.#stillStarting();
    this.#requests.use(this.#api.handler);
  }

  /**
   * A registrar's claim on its plugins directory: the one-registrar lock
   * (registrar-lock.ts), then, unless forced, the refusal of a directory a
   * running kubelet seems to own (kubelet-check.ts). Observers skip both.
   */
  async #claimPluginsDir(): Promise<void> {
    const { config } = this;
    this.#lock = await acquireRegistrarLock(
      { pid: process.pid, dataDir: config.dataDir, pluginsDir: config.pluginsDir },
      this.#logger,
    );
    if (config.force) return;
    await refuseKubeletDirectory(config.pluginsDir);
  }

  /** Throws once a stop has begun, so start does not open anything after it. */
  #stillStarting(): void {
    if (this.state !== 'starting') {
      throw new BerthError('BERTH_SHUT_DOWN', 'the daemon was stopped while it was starting');
    }
  }

  /** Ends event streams and closes the API servers and app; safe to call again. */
  async #closeApi(): Promise<void> {
    if (this.#recordedAddress) removeApiAddresses(this.#apiAddressPath);
    this.#recordedAddress = false;
    await Promise.all([this.#bus.stop(), this.#clusterBus.stop()]);
    await Promise.all(this.#servers.map((server) => closeServer(server, 1000, this.#clock)));
    await this.#api?.app.close();
  }

  #backend(
    registry: Registry,
    pluginManager: PluginManager,
    objects: ObjectManagers,
    references: Pick<typeof import('../objects/index.js'), 'getSecretNames' | 'getConfigMapNames'>,
    handlers: BuiltinHandlerSet,
    volumes: VolumeManager,
  ): ApiBackend {
    const limits = this.#objectLimits;
    // The pod side and the CSI side meet here, in the composition root, and nowhere else.
    const podVolumes = createPodVolumeHook(volumes, this.#logger);
    const sockets = (): SocketStatus[] => pluginManager.sockets();
    return {
      plugins: registry,
      sockets,
      events: this.#bus,
      devices: handlers.DevicePlugin.manager,
      pods: createPodRegistry({
        manager: {
          registerPod: (pod) => objects.registerPod(pod as ObjectsPod),
          unregisterPod: (pod) => objects.unregisterPod(pod as ObjectsPod),
        },
        secretNames: (pod) => references.getSecretNames(pod as ObjectsPod),
        configMapNames: (pod) => references.getConfigMapNames(pod as ObjectsPod),
        // Getters: the pod registry reads its caps at each apply, so a reload applies at once.
        get maxPods() {
          return limits.maxPods;
        },
        get maxReferencesPerPod() {
          return limits.maxReferencesPerPod;
        },
        volumes: { publish: (pod) => podVolumes.publish(pod), unpublish: (pod) => podVolumes.unpublish(pod) },
      }),
      objects: meteredReader(
        {
          get: (resource, namespace, name) =>
            resource === 'secrets'
              ? objects.secrets.getSecret(namespace, name)
              : objects.configMaps.getConfigMap(namespace, name),
        },
        this.#metrics,
      ),
      metrics: {
        contentType: this.#metrics.registry.contentType,
        render: () => this.#metrics.registry.metrics(),
      },
      // Not ready while starting or stopping, the plugins directory cannot be watched, or registry writes fail.
      readiness: () => this.readiness.evaluate(),
      csi: handlers.CSIPlugin,
      csiVolumes: volumes,
      dra: handlers.DRAPlugin,
      cluster: () => this.#cluster?.api,
      clusterEvents: this.#clusterBus,
      status: () =>
        buildStatus({
          version: this.#version,
          // The wire keeps the daemon's historic name for running-and-serving.
          state: this.ready ? 'ready' : this.state,
          startedAt: this.#startedAt,
          now: this.#clock.now(),
          config: this.config,
          api: this.#apiAddress
            ? {
                socket: this.#apiAddress.socketPath,
                tcp: this.#apiAddress.tcp ? formatHostPort(this.#apiAddress.tcp) : null,
              }
            : { socket: this.config.apiSocketPath, tcp: null },
          registry,
          sockets: sockets(),
          objects: objects.stats(),
          sseClients: this.#bus.subscriberCount + this.#clusterBus.subscriberCount,
          corruption: this.#corruption,
          storageHealth: registry.storageHealth(),
          readiness: this.readiness.evaluate(),
          recreated: this.#recreated,
          handlers: this.#node?.handlerTypes.map((type) => ({ type, builtin: type in handlers })) ?? [],
          cluster: this.#cluster?.api,
        }),
    };
  }

  /** A SIGHUP reload's object settings: the Cache TTL and the pod caps, for later reads and applies. */
  setObjectLimits(limits: ObjectLimits): void {
    Object.assign(this.#objectLimits, limits);
  }

  /** A SIGHUP reload's new version list for a versioned handler; later registrations are checked against it. */
  setHandlerVersions(type: string, versions: readonly string[]): void {
    this.#node?.setHandlerVersions(type, versions);
  }

  /** What systemd is told (service-status.ts): ready as /readyz says (the one readiness), and the plugins registered. */
  serviceState(): { ready: boolean; problem?: string; plugins: number } {
    const report = this.readiness.evaluate();
    const registry = this.#registry;
    let plugins = 0;
    for (const type of registry?.types() ?? []) plugins += registry?.listPlugins(type)?.length ?? 0;
    if (report.ready) return { ready: true, plugins };
    const failed = report.checks.find((check) => !check.ok);
    return { ready: false, problem: `${failed?.name}: ${failed?.reason ?? 'failed'}`, plugins };
  }

  /**
   * Stops everything, newest first (stop() is memoised: concurrent calls share
   * one stop). Each step is isolated: one failing does not keep the rest (or
   * the state database) open.
   */
  protected override async onStop(): Promise<void> {
    const wasReady = this.#started;
    this.readiness.stop();
    this.#abort.abort(new BerthError('BERTH_SHUT_DOWN', 'the daemon is stopping'));
    // The children in start order (the full API takes over last, so its streams end first);
    // stopInReverse stops them newest first under the shutdown deadline.
    const children: Array<StoppableChild | undefined> = [
      this.#lock && { name: 'the plugins directory lock', stop: () => this.#lock?.release() },
      this.#source && { name: 'the object source', stop: () => this.#source?.stop() },
      this.#storage && { name: 'the state database', stop: () => this.#storage?.stop() },
      this.#node && {
        name: 'the plugin node (plugin manager, registry, handlers, dispenser)',
        stop: () => this.#node?.stop(),
      },
      this.#volumes && { name: 'the CSI volume manager', stop: () => this.#volumes?.stop() },
      this.#cluster && { name: 'the cluster view', stop: () => this.#cluster?.stop() },
      this.#objects && { name: 'the object manager', stop: () => this.#objects?.stop() },
      { name: 'the API', stop: () => this.#closeApi() },
    ];
    await stopInReverse(
      children.filter((child) => child !== undefined),
      {
        clock: this.#clock,
        logger: this.#logger,
        deadline: this.#clock.now() + this.config.shutdownTimeoutMs,
      },
    );
    // A failed start is reported by its caller; only a daemon that ran says it stopped.
    if (wasReady) this.#logger.info('berth stopped');
  }
}

function makeDirectory(path: string, mode: number, flag: string): void {
  try {
    mkdirSync(path, { recursive: true, mode });
  } catch (err) {
    throw new BerthError(
      'BERTH_INVALID_ARGUMENT',
      `cannot create ${path} (${(err as NodeJS.ErrnoException).code ?? errorMessage(err)}); choose another ${flag}`,
      { cause: err },
    );
  }
}

export function createDaemon(config: DaemonConfig, deps: DaemonDeps): Daemon {
  return new Daemon(config, deps);
}
