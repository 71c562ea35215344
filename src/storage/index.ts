export { createMemoryStorage } from './memory-storage.js';
export { createSqliteStorage, type SqliteStorage } from './sqlite-storage.js';
export { SQLITE_STORAGE_DEFAULTS, type SqliteStorageOptions } from './storage-options.js';
export type {
  RegistryChange,
  RegistryState,
  RegistryStorage,
  StateStorage,
  StorageCorruptionReport,
  StorageWriteStats,
} from './types.js';
