/**
 * The package entry point berth/storage: what a library user needs. package.json
 * "exports" maps the subpath to this file, not to index.ts, which also carries
 * names only berth's own folders use (lint lets other folders in through
 * index.ts; the package does not export it, so users cannot reach them).
 * scripts/api-report.mjs keeps the names and their signatures in api/.
 */
export {
  createMemoryStorage,
  createSqliteStorage,
  type RegistryChange,
  type RegistryState,
  type RegistryStorage,
  type SqliteStorage,
  type SqliteStorageOptions,
  type StorageCorruptionReport,
} from './index.js';
