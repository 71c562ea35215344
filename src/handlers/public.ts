/**
 * The package entry point berth/handlers: what a library user needs. package.json
 * "exports" maps the subpath to this file, not to index.ts, which also carries
 * names only berth's own folders use (lint lets other folders in through
 * index.ts; the package does not export it, so users cannot reach them).
 * scripts/api-report.mjs keeps the names and their signatures in api/.
 */

// The built-in types' own entries (handlers/index.ts does not load them: berth/plugin-node stays light).
export { CSIPlugin, CsiHandler, createCsiHandler } from './csi/index.js';
export { createDevicePluginManager, type DevicePluginManager } from './device-plugin/index.js';
export { createDraHandler, DRAPlugin, DraHandler } from './dra/index.js';
export {
  BUILTIN_HANDLER_TYPES,
  type BuiltinHandler,
  type BuiltinHandlerType,
  createDevicePluginHandler,
  createVersionedHandler,
  DevicePlugin,
  type DevicePluginHandlerOptions,
  type InstanceRef,
  type PluginCallContext,
  type PluginHandler,
  type RegisterContext,
  type VersionedHandlerOptions,
} from './index.js';
