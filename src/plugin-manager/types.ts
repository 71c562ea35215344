import type { Registry } from 'prom-client';
import type { PluginInfo } from '../cache/types.js';
import type { BackoffSetting, BerthMode, Clock, Lifecycle, Logger, PluginEvent } from '../common/index.js';
import type { ExecutorTimeouts, SlotBudgets, YoungSocketRetry } from '../executor/index.js';
import type { PluginHandler } from '../handlers/types.js';
import type { DialRegistration } from '../registration/types.js';

export interface LivenessOptions {
  /** Keepalive ping period of the connection held to each registered plugin. Default 10 s. */
  periodMs: number;
  /** Deadline of one ping (and of a reconnect or recovery probe). Default 5 s. */
  timeoutMs: number;
  /** Consecutive failed pings before the plugin is deregistered. Default 3. */
  failureThreshold: number;
  /**
   * Pings sent per period at most, so the per-period cost does not grow with
   * the plugin count: with more plugins, each is pinged every
   * ceil(plugins / pingsPerPeriod) periods. A closed connection is noticed at
   * once regardless. Default 1,000.
   */
  pingsPerPeriod?: number;
}

export interface PluginManagerOptions {
  /** The registration directory (kubelet: /var/lib/kubelet/plugins_registry). Created if missing (not by an observer). */
  pluginsDir: string;
  /**
   * `registrar` (default): register plugins and tell them (NotifyRegistrationStatus).
   * `observe`: another registrar owns the directory; every attempt is a dry run
   * that sends no Notify, handlers get `mode: 'observe'` (read-only calls only),
   * and sockets report `observed` / `stale` / `unreachable` with the verdict.
   */
  mode?: BerthMode;
  /** Optional second directory; its plugins reach handlers with `foundInDeprecatedDir: true`. */
  deprecatedPluginsDir?: string;
  clock?: Clock;
  logger?: Logger;
  /** Safety-net reconcile period. Default 10 s: the reconciler is woken by every change. */
  resyncPeriodMs?: number;
  /** Full directory rescan period; 0 disables it. Default: the watcher's (10 s). */
  rescanIntervalMs?: number;
  /** Watch the directory tree with fs.watch. Default true (false: discovery by rescans only). */
  useFsWatch?: boolean;
  /** Deadlines of one registration attempt. Defaults: dial 10 s, GetInfo 1 s, Notify 5 s. */
  timeouts?: Partial<ExecutorTimeouts>;
  /** Backoff per socket after a failed attempt. Default 500 ms doubling to 122 s (the kubelet's). */
  backoff?: BackoffSetting;
  /** Registration handshakes holding a slot at once; more queue in order. Default 64. */
  maxConcurrentRegistrations?: number;
  /** How long an attempt may hold a slot; the per-type and slow lanes (README: Registration slots). */
  slotBudgets?: Partial<SlotBudgets>;
  /** Quick redials of a socket file younger than ~1 s that refuses (bind before listen); false: none. */
  youngSocketRetry?: YoungSocketRetry | false;
  /** The registration client. Default: src/registration dialRegistration. */
  dial?: DialRegistration;
  /** Liveness probing of registered plugins; `false` turns it off. */
  liveness?: Partial<LivenessOptions> | false;
  /** Where the metrics are registered. Default: a private Registry (see `metricsRegistry`). */
  metricsRegistry?: Registry;
  /**
   * The manager's one event channel, called in order for every event (the
   * same events `subscribe` streams): 'discovered', 'socket-removed',
   * 'failed', 'plugin-registered', 'plugin-deregistered'.
   */
  onEvent?: (event: PluginManagerEvent) => void;
  /**
   * Log each failed attempt and liveness removal at warn. Default true; a
   * caller that logs the 'failed' events itself (the daemon) turns it off,
   * so each failure is logged once.
   */
  logFailures?: boolean;
}

/**
 * What the plugin manager reports: the socket events of the common union
 * ('discovered', 'socket-removed', 'failed'), and each plugin it registered
 * (its handler accepted it and the plugin was told so) or deregistered from
 * its handler (socket gone, replaced, or dead). The registry reports the
 * instances themselves ('registered' / 'deregistered' in PluginEvent).
 */
export type PluginManagerEvent =
  | Extract<PluginEvent, { type: 'discovered' | 'socket-removed' | 'failed' }>
  | { type: 'plugin-registered'; at: number; socketPath: string; plugin: RegisteredPlugin }
  | {
      type: 'plugin-deregistered';
      at: number;
      socketPath: string;
      plugin: RegisteredPlugin;
      reason: DeregistrationReason;
    };

export interface PluginManagerSubscribeOptions {
  /** Ends the stream when aborted. */
  signal?: AbortSignal;
  /** Events held for a slow consumer before its stream ends with BERTH_SUBSCRIBER_LAGGED. Default 1,000. */
  queueSize?: number;
}

/** One registered plugin instance, as the plugin manager reports it. */
export interface RegisteredPlugin {
  socketPath: string;
  type: string;
  name: string;
  /** Where the plugin serves; the socket path when GetInfo reported no endpoint. */
  endpoint: string;
  versions: string[];
  /** The socket generation this registration belongs to. */
  uuid: string;
  foundInDeprecatedDir: boolean;
  registeredAt: number;
  /** True in observe mode: berth only observed the plugin; another registrar registered it (or not). */
  observed: boolean;
}

/** Why a plugin was deregistered: its socket went away, a new socket file replaced it, or liveness gave up. */
export type DeregistrationReason = 'socket-removed' | 'replaced' | 'liveness';

export type SocketState =
  | 'pending'
  | 'registered'
  | 'failed'
  | 'backoff'
  | 'observed'
  | 'stale'
  | 'unreachable';

/**
 * One socket's state. Registrar mode: `pending`: discovered and not yet
 * registered, or an operation is running on it. `registered`. `backoff`: the
 * last attempt failed and the next is not permitted before `retryAt`.
 * `failed`: the last attempt failed and its window has passed (a retry is
 * due), or liveness gave up on it. Observe mode: `pending`; `observed`: the
 * plugin answered GetInfo (`verdict` says whether the kubelet would accept
 * it); `stale`: nothing listens on the file; `unreachable`: it did not answer
 * (timeout, protocol error). Failed probes are retried on the same backoff.
 */
export interface SocketStatus {
  socketPath: string;
  state: SocketState;
  plugin?: { type: string; name: string };
  endpoint?: string;
  versions?: string[];
  lastError?: { code: string; message: string; cause?: string };
  /**
   * When berth tries this socket again: the next registration attempt, or,
   * for a socket liveness gave up on, the next recovery probe (its interval
   * doubles from one liveness period up to 32).
   */
  retryAt?: number;
  /** Attempts since the last success of this socket generation. */
  attempts: number;
  registeredAt?: number;
  foundInDeprecatedDir?: boolean;
  /**
   * Observe mode, once the plugin answered: the dry run's verdict. `accepted`
   * false carries the text the kubelet would send the plugin in
   * NotifyRegistrationStatus (duplicate name, unsupported versions, ...).
   */
  verdict?: { accepted: boolean; error?: string };
}

/** The read side of the desired state. */
export interface DesiredStateView {
  getPluginsToRegister(): PluginInfo[];
  pluginExists(socketPath: string): boolean;
  get(socketPath: string): PluginInfo | undefined;
}

/** The read side of the actual state. */
export interface ActualStateView {
  getRegisteredPlugins(): PluginInfo[];
  pluginExists(socketPath: string): boolean;
  pluginExistsWithCorrectUUID(info: PluginInfo): boolean;
  get(socketPath: string): PluginInfo | undefined;
}

/**
 * berth's plugin manager (kubelet plugin_manager.go): a watcher feeding the
 * desired state, an event-driven reconciler, the operation executor and
 * liveness probing, behind one lifecycle.
 */
export interface PluginManager extends Lifecycle {
  /** Adds or replaces the handler for a plugin type; plugins waiting for it register at once. */
  addHandler(type: string, handler: PluginHandler): void;
  removeHandler(type: string): boolean;
  handlerTypes(): string[];
  /** Starts everything; resolves once the first directory scan is done. Aborting `signal` stops the manager. */
  start(signal?: AbortSignal): Promise<void>;
  /** Resolves after the first directory scan; rejects if start fails or stop comes first. */
  readonly ready: Promise<void>;
  /** Stops the watcher, reconciler and liveness, aborts running operations and waits for them. Idempotent. */
  stop(): Promise<void>;
  readonly desiredState: DesiredStateView;
  readonly actualState: ActualStateView;
  /** Rescans the plugin directories now (besides the watch and the periodic rescan); resolves when done. */
  rescan(): Promise<void>;
  /** Every socket berth knows of (desired or registered, plus sockets liveness gave up on), sorted by path. */
  sockets(): SocketStatus[];
  /** One socket's state (O(1)); undefined for a socket berth does not know. */
  socket(socketPath: string): SocketStatus | undefined;
  /** Socket paths of the plugins registered right now. */
  liveSocketPaths(): Set<string>;
  /**
   * Retries now, without waiting out their backoff, the registrations that
   * failed because berth's storage could not persist them (BERTH_STORAGE_FAILED
   * anywhere in the error's causes); returns how many. Called when writes work again.
   */
  retryStorageFailures(): number;
  /**
   * The manager's events from now on (those `onEvent` gets), as a stream that
   * ends when `signal` aborts, when the consumer breaks out of its loop, or
   * when the manager stops.
   */
  subscribe(options?: PluginManagerSubscribeOptions): AsyncIterable<PluginManagerEvent>;
  readonly metricsRegistry: Registry;
}
