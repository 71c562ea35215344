/**
 * Test support: the storages registry tests run against. "restart" gives the
 * storage a new registry would see after a daemon restart (the same object for
 * memory, a closed and reopened file for SQLite).
 */
import type { PluginInstanceInfo } from '../common/index.js';
import { createMemoryStorage, openSqliteStorage, type StateStorage } from '../storage/index.js';
import { createTempDir } from '../testing/temp-dir.js';

export interface StorageFixture {
  storage(): StateStorage;
  restart(): StateStorage;
  dispose(): void;
}

export interface StorageKind {
  name: 'memory' | 'sqlite';
  create(): StorageFixture;
}

export const storageKinds: StorageKind[] = [
  {
    name: 'memory',
    create() {
      const storage = createMemoryStorage();
      return { storage: () => storage, restart: () => storage, dispose: () => storage.close() };
    },
  },
  {
    name: 'sqlite',
    create() {
      const dir = createTempDir();
      const path = dir.join('state.db');
      let current = openSqliteStorage({ path });
      return {
        storage: () => current,
        restart() {
          current.close();
          current = openSqliteStorage({ path });
          return current;
        },
        dispose() {
          current.close();
          dir.remove();
        },
      };
    },
  },
];

/** A logger that keeps what was logged, for asserting that failures are reported. */

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
