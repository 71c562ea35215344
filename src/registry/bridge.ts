import {
  BerthError,
  errorMessage,
  isBerthError,
  type Logger,
  type PluginInstanceInfo,
  silentLogger,
} from '../common/index.js';
import type { InstanceRef, PluginHandler } from '../handlers/types.js';
import { enforceRecordBudget } from '../registration/registrar.js';
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
  reconcileRestored(liveSocketPaths: ReadonlySet<string>): Promise<PluginInstanceInfo[]>;
  /**
   * Merges a handler's facts into an instance's options (HandlerServices.recordFacts).
   * While the instance's registration is under way they are held and land with
   * it; once this bridge has registered it, the instance is updated in place.
   * The bridge's own keys (endpoint, socketPath, versions, source) cannot be set.
   */
  recordFacts(instance: InstanceRef, facts: Readonly<Record<string, string>>): void;
  /** Instances restored from storage that no registration has confirmed or removed yet (copies). */
  unconfirmed(): PluginInstanceInfo[];
  /**
   * Takes what the registry holds now, and this bridge did not register, as
   * restored (unconfirmed). For a registry whose storage was started after the
   * bridge was made; the constructor already takes what was there.
   */
  captureRestored(): void;
}

/**
 * The option an observer's instances carry (`observed: "true"`): the plugin
 * was registered (or not) by another registrar; berth only watched it and
 * told it nothing.
 */
export const OBSERVED_OPTION = 'observed';

/** Option keys the bridge itself writes. */
const BRIDGE_KEYS = new Set(['endpoint', 'socketPath', 'versions', 'source', OBSERVED_OPTION]);

export function createRegistryBridge(options: RegistryBridgeOptions): RegistryBridge {
  const { registry } = options;
  const logger = options.logger ?? silentLogger;
  const key = (type: string, name: string, allocId: string) => JSON.stringify([type, name, allocId]);

  // What the registry restored; an instance leaves this set once the plugin manager confirms it.
  const unconfirmed = new Map<string, PluginInstanceInfo>();
  // Facts recorded before the instance's registration reached the bridge, by instance key.
  const pendingFacts = new Map<string, Record<string, string>>();
  // Instances this bridge registered (and has not deregistered) in this process.
  const live = new Set<string>();
  const captureRestored = () => {
    for (const type of registry.types()) {
      for (const current of registry.listPlugins(type) ?? []) {
        for (const info of registry.listInstances(type, current.name)) {
          const id = key(info.type, info.name, info.allocId);
          if (!live.has(id)) unconfirmed.set(id, info);
        }
      }
    }
  };
  captureRestored();

  return {
    captureRestored,

    recordFacts(instance, facts) {
      for (const [name, value] of Object.entries(facts)) {
        if (BRIDGE_KEYS.has(name) || typeof value !== 'string') {
          throw new BerthError(
            'BERTH_INVALID_ARGUMENT',
            `fact ${JSON.stringify(name)} of ${instance.type} ${instance.name}: facts are strings and may not replace ${[...BRIDGE_KEYS].join(', ')}`,
          );
        }
      }
      const id = key(instance.type, instance.name, instance.socketPath);
      const present = live.has(id)
        ? registry.listInstances(instance.type, instance.name).find((e) => e.allocId === instance.socketPath)
        : undefined;
      if (present === undefined) {
        const pending = { ...pendingFacts.get(id), ...facts };
        // Refused here, before anything is held: the handler's register fails naming the budget.
        enforceRecordBudget({ type: instance.type, name: instance.name, options: pending });
        pendingFacts.set(id, pending);
        return;
      }
      enforceRecordBudget({ ...present, options: { ...present.options, ...facts } });
      // A later fact updates the durable instance; a failed write is the registry's storage-error to report.
      registry
        .registerPlugin({ ...present, options: { ...present.options, ...facts } })
        .catch((err: unknown) => {
          logger.warn({ err, type: instance.type, name: instance.name }, 'could not record handler facts');
        });
    },

    handlerFor(type: string): PluginHandler {
      return {
        validatePlugin() {},
        registerPlugin(name, endpoint, versions, context) {
          const id = key(type, name, context.socketPath);
          unconfirmed.delete(id);
          const facts = pendingFacts.get(id);
          pendingFacts.delete(id);
          const record = {
            type,
            name,
            version: versions[0] ?? '',
            connectionInfo: { socketPath: endpoint },
            // The registration socket identifies the instance, as an alloc id does in Nomad.
            allocId: context.socketPath,
            options: {
              ...facts,
              endpoint,
              socketPath: context.socketPath,
              versions: versions.join(','),
              ...(context.mode === 'observe' ? { [OBSERVED_OPTION]: 'true' } : {}),
              source: context.source ?? 'plugins-dir',
            },
          };
          // Bad input throws at once (a record over its budget too); the promise resolves once the
          // registration is durable, so the plugin is told Notify(true) only then.
          enforceRecordBudget(record);
          const durable = registry.registerPlugin(record);
          return durable.then(() => {
            live.add(id);
          });
        },
        async deRegisterPlugin(name, _endpoint, context) {
          const id = key(type, name, context.socketPath);
          unconfirmed.delete(id);
          pendingFacts.delete(id);
          live.delete(id);
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

    async reconcileRestored(liveSocketPaths) {
      const removed: PluginInstanceInfo[] = [];
      for (const [id, info] of [...unconfirmed]) {
        // An empty id was not written by this bridge and names no socket.
        if (info.allocId === '' || liveSocketPaths.has(info.allocId)) continue;
        unconfirmed.delete(id);
        const present = registry.listInstances(info.type, info.name).find((e) => e.allocId === info.allocId);
        if (present === undefined) continue;
        let failure: unknown;
        try {
          await registry.deregisterPlugin(info.type, info.name, info.allocId);
        } catch (err) {
          // Report what actually happened (a deregistration hides the instance even when its write fails).
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
