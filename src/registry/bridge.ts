import {
  errorMessage,
  isBerthError,
  type Logger,
  type PluginInstanceInfo,
  silentLogger,
} from '../common/index.js';
import type { PluginHandler } from '../handlers/types.js';
import type { Registry } from './types.js';

export interface RegistryBridgeOptions {
  registry: Registry;
  logger?: Logger;
}

/**
 * Connects the plugin manager to the registry: plugins registered through a
 * socket become registry instances, keyed by their registration socket.
 */
export interface RegistryBridge {
  /** A handler for one plugin type that records registrations in the registry. */
  handlerFor(type: string): PluginHandler;
  /**
   * Deregisters instances restored from storage (present when the bridge was
   * created and not registered again since) whose socket is not live.
   * Call it after the plugin manager's first directory scan. Returns what it removed.
   */
  reconcileRestored(liveSocketPaths: ReadonlySet<string>): PluginInstanceInfo[];
  /** Instances restored from storage that no registration has confirmed or removed yet (copies). */
  unconfirmed(): PluginInstanceInfo[];
}

export function createRegistryBridge(options: RegistryBridgeOptions): RegistryBridge {
  const { registry } = options;
  const logger = options.logger ?? silentLogger;
  const key = (type: string, name: string, allocId: string) => JSON.stringify([type, name, allocId]);

  // What the registry restored; an instance leaves this set once the plugin manager confirms it.
  const unconfirmed = new Map<string, PluginInstanceInfo>();
  for (const type of registry.types()) {
    for (const current of registry.listPlugins(type) ?? []) {
      for (const info of registry.listInstances(type, current.name)) {
        unconfirmed.set(key(info.type, info.name, info.allocId), info);
      }
    }
  }

  return {
    handlerFor(type: string): PluginHandler {
      return {
        validatePlugin() {},
        registerPlugin(name, endpoint, versions, context) {
          unconfirmed.delete(key(type, name, context.socketPath));
          // Returned as is: a malformed entry throws at once, and an asynchronous (durable) write
          // is awaited by the register operation, so Notify(true) goes out only once it is durable.
          return registry.registerPlugin({
            type,
            name,
            version: versions[0] ?? '',
            connectionInfo: { socketPath: endpoint },
            // The registration socket identifies the instance, as an alloc id does in Nomad.
            allocId: context.socketPath,
            options: { endpoint, socketPath: context.socketPath, versions: versions.join(',') },
          });
        },
        async deRegisterPlugin(name, _endpoint, context) {
          unconfirmed.delete(key(type, name, context.socketPath));
          try {
            await registry.deregisterPlugin(type, name, context.socketPath);
          } catch (err) {
            // Nothing of this type was ever registered: there is nothing to remove.
            if (!isBerthError(err, 'BERTH_NO_PLUGINS_FOR_TYPE')) throw err;
            logger.debug(
              { type, name, socketPath: context.socketPath },
              'deregister of an unknown plugin type',
            );
          }
        },
      };
    },

    unconfirmed() {
      return [...unconfirmed.values()].map((info) => ({ ...info }));
    },

    reconcileRestored(liveSocketPaths) {
      const removed: PluginInstanceInfo[] = [];
      for (const [id, info] of [...unconfirmed]) {
        // An empty id was not written by this bridge and names no socket.
        if (info.allocId === '' || liveSocketPaths.has(info.allocId)) continue;
        unconfirmed.delete(id);
        const present = registry.listInstances(info.type, info.name).find((e) => e.allocId === info.allocId);
        if (present === undefined) continue;
        let failure: unknown;
        try {
          const written: unknown = registry.deregisterPlugin(info.type, info.name, info.allocId);
          // An asynchronous (group-committed) write reports its failure later: log it then.
          if (written instanceof Promise) {
            written.catch((err: unknown) =>
              logger.warn(
                { type: info.type, name: info.name, socketPath: info.allocId, err: errorMessage(err) },
                'removing a restored plugin instance failed',
              ),
            );
          }
        } catch (err) {
          // A storage failure still removes the instance in memory; report what actually happened.
          failure = err;
        }
        const gone = !registry.listInstances(info.type, info.name).some((e) => e.allocId === info.allocId);
        const fields = { type: info.type, name: info.name, socketPath: info.allocId };
        if (gone) {
          removed.push(present);
          logger.info(fields, 'removed restored plugin instance whose socket is gone');
        }
        if (failure !== undefined) {
          logger.warn(
            { ...fields, err: errorMessage(failure) },
            'removing a restored plugin instance failed',
          );
        }
      }
      return removed;
    },
  };
}
