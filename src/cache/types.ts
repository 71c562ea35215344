import type { PluginHandler } from '../handlers/types.js';

/**
 * One socket's entry in the desired or actual state of the world
 * (kubelet `cache.PluginInfo`). Desired-state entries carry only the socket
 * path and its generation (timestamp + uuid); actual-state entries also carry
 * what registration learned.
 */
export interface PluginInfo {
  socketPath: string;
  /** Milliseconds since the epoch when this generation of the socket was seen. */
  timestamp: number;
  /** Unique per generation: a re-created socket gets a new uuid even within one clock tick. */
  uuid: string;
  foundInDeprecatedDir: boolean;
  handler?: PluginHandler;
  /** Filled in by registration. */
  type?: string;
  name?: string;
  endpoint?: string;
  supportedVersions?: string[];
}

/** What the watcher writes and the reconciler reads. */
export interface DesiredStateOfWorld {
  /** Throws BerthError BERTH_SOCKET_PATH_EMPTY ("socket path is empty") for "". Always a new generation. */
  addOrUpdatePlugin(socketPath: string, options?: { foundInDeprecatedDir?: boolean }): void;
  removePlugin(socketPath: string): void;
  getPluginsToRegister(): PluginInfo[];
  pluginExists(socketPath: string): boolean;
  /** Called after every add, update or removal; returns an unsubscribe function. Wakes the reconciler. */
  onChange(listener: (socketPath: string) => void): () => void;
}

/** What the operations write and the reconciler reads. */
export interface ActualStateOfWorld {
  /** Throws BerthError BERTH_SOCKET_PATH_EMPTY for an empty socketPath. Overwrites an existing entry. */
  addPlugin(info: PluginInfo): void;
  removePlugin(socketPath: string): void;
  getRegisteredPlugins(): PluginInfo[];
  pluginExists(socketPath: string): boolean;
  /** Deprecated upstream (coarse clocks); kept for parity. */
  pluginExistsWithCorrectTimestamp(info: PluginInfo): boolean;
  pluginExistsWithCorrectUUID(info: PluginInfo): boolean;
}
