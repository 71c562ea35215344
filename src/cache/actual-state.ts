import { BerthError, type Logger, silentLogger } from '../common/index.js';
import { clonePluginInfo } from './clone-plugin-info.js';
import type { ActualStateOfWorld, PluginInfo } from './types.js';

export interface ActualStateOfWorldOptions {
  logger?: Logger;
}

/** The actual state plus a lookup of one entry. */
export interface ActualStateOfWorldStore extends ActualStateOfWorld {
  /** A copy of the entry for `socketPath`, or undefined. */
  get(socketPath: string): PluginInfo | undefined;
  /**
   * Visits every entry without copying it (the reconciler's periodic full pass
   * at 5,000 plugins cloned 10,000 entries every period). `visit` must not
   * modify or keep the entry.
   */
  each(visit: (info: Readonly<PluginInfo>) => void): void;
}

/**
 * The sockets that are registered, keyed by socket path (kubelet
 * `cache.ActualStateOfWorld`). Written only by the register/unregister
 * operations; the reconciler compares it with the desired state by uuid.
 */
export function createActualStateOfWorld(options: ActualStateOfWorldOptions = {}): ActualStateOfWorldStore {
  const logger = (options.logger ?? silentLogger).child({ component: 'actual-state' });
  const plugins = new Map<string, PluginInfo>();

  return {
    addPlugin(info) {
      if (info.socketPath === '') throw new BerthError('BERTH_SOCKET_PATH_EMPTY', 'socket path is empty');
      if (plugins.has(info.socketPath)) {
        logger.debug({ socketPath: info.socketPath }, 'plugin exists in actual state cache; overwriting it');
      }
      plugins.set(info.socketPath, clonePluginInfo(info));
    },

    removePlugin(socketPath) {
      plugins.delete(socketPath);
    },

    getRegisteredPlugins() {
      return [...plugins.values()].map(clonePluginInfo);
    },

    pluginExists(socketPath) {
      return plugins.has(socketPath);
    },

    pluginExistsWithCorrectTimestamp(info) {
      const existing = plugins.get(info.socketPath);
      return existing !== undefined && existing.timestamp === info.timestamp;
    },

    pluginExistsWithCorrectUUID(info) {
      const existing = plugins.get(info.socketPath);
      return existing !== undefined && existing.uuid === info.uuid;
    },

    each(visit) {
      for (const info of plugins.values()) visit(info);
    },

    get(socketPath) {
      const info = plugins.get(socketPath);
      return info === undefined ? undefined : clonePluginInfo(info);
    },
  };
}
