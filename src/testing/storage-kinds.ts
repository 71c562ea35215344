/**
 * The storages that registry and storage tests run against, each with "the
 * same storage after a restart": the same object for memory, a closed and
 * reopened file for SQLite.
 */
import { createMemoryStorage, openSqliteStorage, type StateStorage } from '../storage/index.js';
import { createTempDir } from './temp-dir.js';

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
