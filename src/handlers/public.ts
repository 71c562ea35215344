/**
 * The package entry point berth/handlers: what a library user needs. package.json
 * "exports" maps the subpath to this file, not to index.ts, which also carries
 * names only berth's own folders use (lint lets other folders in through
 * index.ts; the package does not export it, so users cannot reach them).
 * scripts/api-report.mjs keeps the names and their signatures in api/.
 */
export {
  BUILTIN_HANDLER_TYPES,
  type BuiltinHandler,
  type BuiltinHandlerType,
  CSIPlugin,
  CsiHandler,
  createCsiHandler,
  createDevicePluginHandler,
  createDevicePluginManager,
  createDraHandler,
  createVersionedHandler,
  DevicePlugin,
  type DevicePluginHandlerOptions,
  type DevicePluginManager,
  DRAPlugin,
  DraHandler,
  type InstanceRef,
  type PluginCallContext,
  type PluginHandler,
  type RegisterContext,
  type VersionedHandlerOptions,
} from './index.js';
