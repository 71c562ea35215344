export { createMemoryStorage } from './memory-storage.js';
export { openSqliteStorage, type SqliteStorage, type SqliteStorageOptions } from './sqlite-storage.js';
export type { RegistryState, StateStorage, StorageCorruptionReport } from './types.js';
