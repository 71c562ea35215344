import { randomUUID } from 'node:crypto';
import {
  BerthError,
  type Clock,
  flatString,
  type Logger,
  silentLogger,
  systemClock,
} from '../common/index.js';
import { clonePluginInfo } from './clone-plugin-info.js';
import type { DesiredStateOfWorld, PluginInfo } from './types.js';

export interface DesiredStateOfWorldOptions {
  clock?: Clock;
  logger?: Logger;
}

/** The desired state plus a lookup of one entry (the reconciler and the API read single sockets). */
export interface DesiredStateOfWorldStore extends DesiredStateOfWorld {
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
 * The sockets that should be registered, keyed by socket path (kubelet
 * `cache.DesiredStateOfWorld`). Every add writes a new generation (timestamp
 * and uuid), so adding an existing path tells the reconciler to re-register it.
 * Deciding whether a socket really is new is the watcher's job, not this cache's.
 */
export function createDesiredStateOfWorld(
  options: DesiredStateOfWorldOptions = {},
): DesiredStateOfWorldStore {
  const clock = options.clock ?? systemClock;
  const logger = (options.logger ?? silentLogger).child({ component: 'desired-state' });
  const plugins = new Map<string, PluginInfo>();
  const listeners = new Set<(socketPath: string) => void>();

  const notify = (socketPath: string): void => {
    // Copy so a listener that unsubscribes (or subscribes) while being called cannot disturb the loop.
    for (const listener of [...listeners]) {
      try {
        listener(socketPath);
      } catch (err) {
        // A broken listener must not break the watcher that wrote the change, nor the other listeners.
        logger.error({ err, socketPath }, 'desired state change listener threw');
      }
    }
  };

  return {
    addOrUpdatePlugin(socketPath, addOptions = {}) {
      if (socketPath === '') throw new BerthError('BERTH_SOCKET_PATH_EMPTY', 'socket path is empty');
      if (plugins.has(socketPath)) {
        logger.debug({ socketPath }, 'plugin exists in desired state cache; writing a new generation');
      }
      plugins.set(socketPath, {
        socketPath,
        timestamp: clock.now(),
        uuid: flatString(randomUUID()), // kept for the plugin's life (flat-string.ts)
        foundInDeprecatedDir: addOptions.foundInDeprecatedDir ?? false,
      });
      notify(socketPath);
    },

    removePlugin(socketPath) {
      if (!plugins.delete(socketPath)) return;
      notify(socketPath);
    },

    getPluginsToRegister() {
      return [...plugins.values()].map(clonePluginInfo);
    },

    pluginExists(socketPath) {
      return plugins.has(socketPath);
    },

    each(visit) {
      for (const info of plugins.values()) visit(info);
    },

    get(socketPath) {
      const info = plugins.get(socketPath);
      return info === undefined ? undefined : clonePluginInfo(info);
    },

    onChange(listener) {
      // Wrap so the same function subscribed twice gets two independent subscriptions.
      const entry = (socketPath: string) => listener(socketPath);
      listeners.add(entry);
      return () => {
        listeners.delete(entry);
      };
    },
  };
}
