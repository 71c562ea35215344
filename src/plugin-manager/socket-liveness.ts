import type { ActualStateOfWorldStore, DesiredStateOfWorldStore, PluginInfo } from '../cache/index.js';
import { BerthError, type Clock, LifecycleComponent, type Logger } from '../common/index.js';
import type { OperationExecutor } from '../executor/index.js';
import type { DialRegistration, HeldConnection } from '../registration/types.js';
import { createLivenessProber, DEFAULT_LIVENESS, type LivenessProber } from './liveness.js';
import type { FailedEvent } from './operation-events.js';
import type { DeadSocket, SocketStatusInputs } from './socket-status.js';
import type { DeregistrationReason, LivenessOptions } from './types.js';

export interface SocketLivenessOptions {
  /** Liveness probing of registered plugins; `false` turns probing off (registration times are still kept). */
  liveness: Partial<LivenessOptions> | false | undefined;
  clock: Clock;
  /** The manager's base logger; the prober names itself `liveness` under it. */
  logger: Logger;
  /** The plugin manager's own logger, for what it reports about dead plugins. */
  managerLogger: Logger;
  logFailures: boolean;
  dial: DialRegistration;
  desiredState: DesiredStateOfWorldStore;
  actualState: ActualStateOfWorldStore;
  executor: OperationExecutor;
  /** Socket files the watcher knows right now. */
  knownSockets: () => string[];
  /** A liveness failure, for the metrics. */
  recordFailure: () => void;
  /** The 'failed' event of a plugin liveness gave up on. */
  emit: (event: FailedEvent) => void;
}

/** What a change of the desired state means, once liveness's own removals are told apart. */
export type DesiredChange = 'discovered' | 'socket-removed' | 'liveness-removal';

/**
 * The plugin manager's memory of each socket beyond the cache: when its
 * current generation registered, and which plugins liveness gave up on while
 * their file lingers. It owns the liveness prober and its callbacks, so the
 * manager only forwards operation outcomes here and reads socket statuses.
 *
 * A plugin liveness gives up on is taken out of the desired state (the
 * reconciler deregisters it; reported as 'failed', not 'socket-removed'). The
 * watcher does not re-add a socket it already reported, so only a new socket
 * file at the path, or the plugin answering again on the same file (the
 * upstream monitor's rule), registers it again.
 */
export class SocketLiveness extends LifecycleComponent {
  readonly #o: SocketLivenessOptions;
  readonly #prober: LivenessProber | undefined;
  /** Plugins liveness gave up on, while their socket file lingers. */
  readonly #dead = new Map<string, DeadSocket>();
  /** When each socket's current generation was registered, and after how many attempts. */
  readonly #registeredAt = new Map<string, { uuid: string; at: number; attempts: number }>();
  /** Desired-state removals done by liveness: reported as 'failed', not as 'socket-removed'. */
  readonly #removals = new Set<string>();

  constructor(options: SocketLivenessOptions) {
    super();
    this.#o = options;
    if (options.liveness === false) return;
    const executor = options.executor;
    this.#prober = createLivenessProber({
      ...DEFAULT_LIVENESS,
      ...Object.fromEntries(Object.entries(options.liveness ?? {}).filter(([, v]) => v !== undefined)),
      clock: options.clock,
      logger: options.logger.child({ component: 'liveness' }),
      dial: options.dial,
      isBusy: (socketPath) => executor.isPending(socketPath),
      deferConnects: () => executor.running > 0,
      onDead: (plugin, error, failures) => this.#onDead(plugin, error, failures),
      deadSockets: () => {
        this.#pruneDead();
        return [...this.#dead.keys()];
      },
      onAlive: (socketPath) => this.#onAlive(socketPath),
      onStillDead: (socketPath, error) => this.#onStillDead(socketPath, error),
    });
  }

  protected override async onStart(): Promise<void> {
    await this.#prober?.start();
  }

  protected override async onStop(): Promise<void> {
    await this.#prober?.stop();
  }

  /** The last running operation settled: open the liveness connections a storm held back. */
  connectWaiting(): void {
    this.#prober?.connectWaiting();
  }

  /** A socket's desired state changed: a new file (whatever liveness decided was about the old one) or a removal. */
  desiredChanged(socketPath: string): DesiredChange {
    if (this.#o.desiredState.pluginExists(socketPath)) {
      this.#dead.delete(socketPath);
      return 'discovered';
    }
    return this.#removals.delete(socketPath) ? 'liveness-removal' : 'socket-removed';
  }

  /** A registering plugin's handshake connection, for `registered` to hold (closed when liveness is off). */
  adopt(socketPath: string, uuid: string, connection: HeldConnection): void {
    if (this.#prober === undefined) connection.destroy();
    else this.#prober.adopt(socketPath, uuid, connection);
  }

  /** A plugin registered: remember when, and hold a liveness connection to it. */
  registered(plugin: PluginInfo, at: number, attempts: number): void {
    this.#registeredAt.set(plugin.socketPath, { uuid: plugin.uuid, at, attempts });
    this.#prober?.watch(plugin);
  }

  /** A plugin deregistered: let go of it; returns when it had registered and why it went. */
  deregistered(plugin: PluginInfo): { registeredAt: number | undefined; reason: DeregistrationReason } {
    this.#prober?.unwatch(plugin.socketPath, plugin.uuid);
    const since = this.#registeredAt.get(plugin.socketPath);
    if (since?.uuid === plugin.uuid) this.#registeredAt.delete(plugin.socketPath);
    const reason: DeregistrationReason =
      this.#dead.get(plugin.socketPath)?.uuid === plugin.uuid
        ? 'liveness'
        : this.#o.desiredState.pluginExists(plugin.socketPath)
          ? 'replaced'
          : 'socket-removed';
    return { registeredAt: since?.at, reason };
  }

  /** What socket statuses need from here, for every socket or one. */
  statusInputs(
    socketPath?: string,
  ): Pick<SocketStatusInputs, 'dead' | 'registeredAt' | 'nextRecoveryProbe'> & { known: boolean } {
    const nextRecoveryProbe = (path: string) => this.#prober?.nextRecoveryProbe(path);
    if (socketPath === undefined) {
      this.#pruneDead();
      return { dead: this.#dead, registeredAt: this.#registeredAt, nextRecoveryProbe, known: true };
    }
    const dead = this.#dead.get(socketPath);
    return {
      dead: dead === undefined ? new Map() : new Map([[socketPath, dead]]),
      registeredAt: this.#registeredAt,
      nextRecoveryProbe,
      known: dead !== undefined,
    };
  }

  /**
   * Liveness gave up on a registered plugin whose socket file is still there:
   * take it out of the desired state so the reconciler deregisters it.
   */
  #onDead(plugin: PluginInfo, error: BerthError, failures: number): void {
    const socketPath = plugin.socketPath;
    const { desiredState, actualState } = this.#o;
    // The probe raced with a change of generation: nothing to do for the old one.
    if (
      !actualState.pluginExistsWithCorrectUUID(plugin) ||
      desiredState.get(socketPath)?.uuid !== plugin.uuid
    )
      return;
    const at = this.#o.clock.now();
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
    this.#o.recordFailure();
    if (this.#o.logFailures) this.#o.managerLogger.warn({ socketPath, failures }, error.message);
    this.#removals.add(socketPath);
    desiredState.removePlugin(socketPath);
    const failed: FailedEvent = {
      type: 'failed',
      at,
      socketPath,
      error: { code: error.code, message: error.message },
      retryAt: null,
      attempts: failures,
    };
    if (dead.plugin !== undefined) failed.plugin = dead.plugin;
    this.#o.emit(failed);
  }

  /**
   * A plugin that liveness gave up on answers again on the same socket file:
   * put that socket back into the desired state as a new generation, so it
   * goes through validate and register again.
   */
  #onAlive(socketPath: string): void {
    const dead = this.#dead.get(socketPath);
    if (dead === undefined || this.#o.desiredState.pluginExists(socketPath)) return;
    if (!this.#o.knownSockets().includes(socketPath)) return; // the file went meanwhile
    this.#o.managerLogger.info(
      { socketPath },
      `plugin at ${socketPath} answers again after liveness gave up: registering it`,
    );
    this.#o.desiredState.addOrUpdatePlugin(socketPath, { foundInDeprecatedDir: dead.foundInDeprecatedDir });
  }

  /**
   * A recovery probe of a dead plugin failed. Its status shows why now, not
   * why liveness gave up: a plugin found stopped (pings timed out) and then
   * killed with its file left refuses connections, and an observer must call
   * it stale, not unreachable. Each failed probe counts as an attempt.
   */
  #onStillDead(socketPath: string, probeError: BerthError): void {
    const dead = this.#dead.get(socketPath);
    if (dead === undefined) return;
    dead.failures += 1;
    const name = dead.plugin?.name ?? '';
    dead.error = new BerthError(
      'BERTH_LIVENESS_FAILED',
      `plugin ${name} at socket ${socketPath} is still dead; its last recovery probe failed: ${probeError.message}`,
      { cause: probeError, details: { socketPath, failures: dead.failures } },
    );
  }

  /** Forgets dead plugins whose socket file is gone (the watcher no longer knows it). */
  #pruneDead(): void {
    if (this.#dead.size === 0) return;
    const known = new Set(this.#o.knownSockets());
    for (const socketPath of this.#dead.keys()) {
      if (!known.has(socketPath) && !this.#o.desiredState.pluginExists(socketPath))
        this.#dead.delete(socketPath);
    }
  }
}
