/**
 * Test support for the registry tests: Nomad's plugin N, and a storage
 * wrapper that counts writes or makes them fail (an injected failure; the
 * real disk-full and read-only cases are in registry-storage-failure.test.ts).
 */
import type { PluginInstanceInfo } from '../common/index.js';
import type { RegistryChange, RegistryStorage } from '../storage/index.js';

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

export interface InstrumentedStorage extends RegistryStorage {
  /** applyChanges calls (transactions attempted). */
  writes: number;
  /** Every change passed to applyChanges, in order. */
  written: RegistryChange[];
  /** While set, applyChanges rejects with this message and applies nothing. */
  failWrites: string | undefined;
}

/** Wraps a storage to count writes or make them fail. */
export function instrumented(inner: RegistryStorage): InstrumentedStorage {
  const wrapper: InstrumentedStorage = {
    writes: 0,
    written: [],
    failWrites: undefined,
    get state() {
      return inner.state;
    },
    get writeStats() {
      return inner.writeStats;
    },
    start: (signal) => inner.start(signal),
    stop: () => inner.stop(),
    [Symbol.asyncDispose]: () => inner.stop(),
    getDynamicPluginRegistryState: () => inner.getDynamicPluginRegistryState(),
    putDynamicPluginRegistryState: (state) => inner.putDynamicPluginRegistryState(state),
    async applyChanges(changes) {
      wrapper.writes += 1;
      if (wrapper.failWrites !== undefined) throw new Error(wrapper.failWrites);
      wrapper.written.push(...changes);
      await inner.applyChanges(changes);
    },
  };
  return wrapper;
}
