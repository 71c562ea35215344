export { type BuiltinHandlerSet, buildBuiltinHandlers } from './build-builtin-handlers.js';
export {
  BUILTIN_HANDLER_TYPES,
  type BuiltinHandlerEntry,
  type BuiltinHandlerOf,
  type BuiltinHandlerType,
  builtinHandlers,
  isBuiltinHandlerType,
} from './builtin-handlers.js';
export {
  CSI_DEFAULTS,
  CSIPlugin,
  type CsiDriverView,
  CsiHandler,
  createCsiHandler,
  csiIdentityService,
  csiNodeService,
} from './csi/index.js';
export {
  type AllocationRequest,
  type AllocationView,
  createDevicePluginManager,
  type DevicePluginBuiltinHandler,
  type DevicePluginManager,
  type ResourceView,
} from './device-plugin/index.js';
export {
  type ClaimRef,
  type ClaimResult,
  type ClaimsResult,
  createDraHandler,
  DRA_DEFAULTS,
  DRAPlugin,
  type DraDriverView,
  DraHandler,
  type DraInstanceView,
  type DraService,
  draApis,
  draServicesSupported,
} from './dra/index.js';
export { createHandlerTable, type HandlerTable, type HandlerTableOptions } from './handler-table.js';
export type {
  BuiltinHandler,
  BuiltinHandlerFactory,
  HandlerServices,
  InstanceRef,
  PluginCallContext,
  PluginHandler,
  RegisterContext,
} from './types.js';
export {
  type BuiltinHandlerOptions,
  createDevicePluginHandler,
  createVersionedHandler,
  DevicePlugin,
  type DevicePluginHandlerOptions,
  devicePluginApiVersion,
  devicePluginFactory,
  type VersionedHandlerOptions,
} from './version-handlers.js';
