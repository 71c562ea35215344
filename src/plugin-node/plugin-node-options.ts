import type { PluginEvent } from '../common/index.js';
import { DEFAULT_EXECUTOR_TIMEOUTS, type ExecutorTimeouts } from '../executor/executor-options.js';
import type { PluginHandler } from '../handlers/index.js';
import type { PluginManagerOptions } from '../plugin-manager/index.js';
import type { PluginDispenser, RegistryOptions } from '../registry/index.js';
import type { RegistryStorage } from '../storage/index.js';

/**
 * Makes the handler for one plugin type, given the handler that records the
 * plugin in the registry (validate first, then delegate to it).
 */
export type HandlerFactory = (registry: PluginHandler) => PluginHandler;

export interface PluginNodeOptions
  extends Omit<PluginManagerOptions, 'onEvent' | 'onRegistered' | 'onDeregistered'> {
  /** Where the registry persists itself (and is restored from). Default: nothing persisted. */
  storage?: RegistryStorage;
  /** Handlers by plugin type; each gets the registry's handler to delegate to. More via addHandler(). */
  handlers?: Record<string, HandlerFactory>;
  /** Dispensers by plugin type (see RegistryOptions). */
  dispensers?: Record<string, PluginDispenser>;
  defaultDispenser?: PluginDispenser;
  /** Per-subscriber queue bound of the registry. Default: unbounded. */
  subscriberQueueSize?: number;
  /**
   * Every event: the plugin manager's (discovered, socket-removed, failed) and
   * the registry's (registered, updated, deregistered, storage-error).
   */
  onEvent?: (event: PluginEvent) => void;
  /**
   * The built-in handlers (one per entry of the builtinHandlers table: CSI,
   * device plugins, DRA), loaded and built at start exactly as the daemon
   * builds them, each delegating to the registry. Their events reach
   * `onEvent`; `PluginNode.builtin` holds them once started.
   */
  builtinHandlers?: BuiltinHandlersOption;
  /**
   * Plugin types accepted when they speak one of the listed versions (the
   * daemon's `handlers` config; `setHandlerVersions` replaces a list later).
   */
  handlerVersions?: Readonly<Record<string, readonly string[]>>;
  /**
   * Dispense every handler type's instances as generic gRPC clients through
   * one dispenser (the daemon's); default: the registry's own dispensers.
   */
  grpcDispenser?: boolean;
  /**
   * At start, how long to wait for restored plugins whose socket is still
   * there to settle before dropping the unconfirmed ones. Default: one full
   * register attempt (dial + GetInfo + Notify deadlines).
   */
  restoreSettleTimeoutMs?: number;
}

/** The built-in handlers' shared services. */
export interface BuiltinHandlersOption {
  /** Where handlers keep their state (device allocations, CSI mounts under `<dataDir>/csi`). */
  dataDir: string;
  /** Each type's `handlerOptions` section, already resolved (milliseconds, absolute paths). */
  options?: Readonly<Record<string, Readonly<Record<string, unknown>>>>;
}

/** How long restored plugins get to settle: one full register attempt under these deadlines. */
export function restoreSettleTimeoutMs(
  timeouts: Pick<ExecutorTimeouts, 'dialMs' | 'getInfoMs' | 'notifyMs'>,
): number {
  return timeouts.dialMs + timeouts.getInfoMs + timeouts.notifyMs;
}

export const DEFAULT_RESTORE_SETTLE_TIMEOUT_MS = restoreSettleTimeoutMs(DEFAULT_EXECUTOR_TIMEOUTS);

/** The registry options the node passes through. */
export type NodeRegistryOptions = Pick<
  RegistryOptions,
  'storage' | 'dispensers' | 'defaultDispenser' | 'subscriberQueueSize'
>;
