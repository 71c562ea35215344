export { createMemoryStorage } from './memory-storage.js';
export { createSqliteStorage, type SqliteStorage } from './sqlite-storage.js';
/** @internal SQLite helpers shared with the device plugin's allocation store: WAL bounds, full-disk handling. */
export {
  applyWalBounds,
  diskFullError,
  isDiskFull,
  openReadOnlyCopy,
  storeNotCreated,
} from './sqlite-wal.js';
export type { SqliteStorageOptions } from './storage-options.js';
export type { RegistryChange, RegistryState, RegistryStorage, StorageCorruptionReport } from './types.js';
