/**
 * The package entry point berth/plugin-manager: what a library user needs. package.json
 * "exports" maps the subpath to this file, not to index.ts, which also carries
 * names only berth's own folders use (lint lets other folders in through
 * index.ts; the package does not export it, so users cannot reach them).
 * scripts/api-report.mjs keeps the names and their signatures in api/.
 */
export {
  createPluginManager,
  type DeregistrationReason,
  type LivenessOptions,
  type PluginManager,
  type PluginManagerOptions,
  type RegisteredPlugin,
  type SocketState,
  type SocketStatus,
} from './index.js';
