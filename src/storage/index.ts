export { createMemoryStorage } from './memory-storage.js';
/** @internal The small durable files of the device plugins' allocations and the CSI volume state. */
export { SmallSqliteFile, type SmallSqliteFileOptions } from './small-sqlite-file.js';
export { createSqliteStorage, type SqliteStorage } from './sqlite-storage.js';
export type { SqliteStorageOptions } from './storage-options.js';
export type { RegistryChange, RegistryState, RegistryStorage, StorageCorruptionReport } from './types.js';
