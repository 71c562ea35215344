import type { PluginInstanceInfo, RegistryEvent } from '../common/index.js';
import type { Registry } from '../registry/index.js';

/**
 * What the cluster writer needs from the local registry: every instance now,
 * and the changes from now on. Built on the registry's public API only.
 */
export interface PluginSource {
  /** Every instance of every plugin (not only the current one per name). */
  list(): PluginInstanceInfo[];
  /** registered / updated / deregistered / lagged events until `signal` aborts. */
  subscribe(signal: AbortSignal): AsyncIterable<RegistryEvent>;
}

export function registryPluginSource(
  registry: Pick<Registry, 'types' | 'listPlugins' | 'listInstances' | 'subscribe'>,
): PluginSource {
  return {
    list() {
      const all: PluginInstanceInfo[] = [];
      for (const type of registry.types()) {
        for (const current of registry.listPlugins(type) ?? []) {
          all.push(...registry.listInstances(type, current.name));
        }
      }
      return all;
    },
    subscribe: (signal) => registry.subscribe(undefined, { signal }),
  };
}
