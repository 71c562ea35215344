/**
 * The package entry point berth/registry: what a library user needs. package.json
 * "exports" maps the subpath to this file, not to index.ts, which also carries
 * names only berth's own folders use (lint lets other folders in through
 * index.ts; the package does not export it, so users cannot reach them).
 * scripts/api-report.mjs keeps the names and their signatures in api/.
 */
export {
  createGrpcDispenser,
  createRegistry,
  type GrpcDispenser,
  type GrpcDispenserOptions,
  type PluginDispenser,
  type Registry,
  type RegistryOptions,
  type StorageHealth,
  type SubscribeOptions,
  type WaitForPluginOptions,
} from './index.js';
