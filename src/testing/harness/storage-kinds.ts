/**
 * The storages that registry and storage tests run against, each started and
 * with "the same storage after a restart": the same object for memory, a
 * stopped and newly started storage on the same file for SQLite.
 */
import { createMemoryStorage, createSqliteStorage, type RegistryStorage } from '../../storage/index.js';
import { createTempDir } from '../temp-dir.js';

export interface StorageFixture {
  /** The current storage (started). */
  storage(): RegistryStorage;
  restart(): Promise<RegistryStorage>;
  dispose(): Promise<void>;
}

export interface StorageKind {
  name: 'memory' | 'sqlite';
  create(): Promise<StorageFixture>;
}

export const storageKinds: StorageKind[] = [
  {
    name: 'memory',
    async create() {
      const storage = createMemoryStorage();
      await storage.start();
      return { storage: () => storage, restart: async () => storage, dispose: () => storage.stop() };
    },
  },
  {
    name: 'sqlite',
    async create() {
      const dir = createTempDir();
      const path = dir.join('state.db');
      let current: RegistryStorage = createSqliteStorage({ path });
      await current.start();
      return {
        storage: () => current,
        async restart() {
          await current.stop();
          current = createSqliteStorage({ path });
          await current.start();
          return current;
        },
        async dispose() {
          await current.stop();
          dir.remove();
        },
      };
    },
  },
];
