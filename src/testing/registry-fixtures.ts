/**
 * Fixtures for registry tests: Nomad's plugin N, and a storage wrapper that
 * counts or fails writes. (The storages themselves: ./storage-kinds.ts.)
 */
import type { PluginInstanceInfo } from '../common/index.js';
import type { StateStorage } from '../storage/index.js';

/** Plugin N of Nomad's concurrent-allocs tests. */
export function nodePlugin(n: number, overrides: Partial<PluginInstanceInfo> = {}): PluginInstanceInfo {
  return {
    type: 'csi-node',
    name: 'my-plugin',
    version: `v${n}`,
    connectionInfo: { socketPath: `/var/data/alloc/alloc-${n}/csi.sock` },
    allocId: `alloc-${n}`,
    options: {},
    ...overrides,
  };
}

/** Wraps a storage to count writes or make them fail. */
export function instrumented(inner: StateStorage): StateStorage & { puts: number; failPuts: boolean } {
  const wrapper = {
    puts: 0,
    failPuts: false,
    getDynamicPluginRegistryState: () => inner.getDynamicPluginRegistryState(),
    putDynamicPluginRegistryState(state: Parameters<StateStorage['putDynamicPluginRegistryState']>[0]) {
      wrapper.puts += 1;
      if (wrapper.failPuts) throw new Error('disk full');
      inner.putDynamicPluginRegistryState(state);
    },
    close: () => inner.close(),
  };
  return wrapper;
}
