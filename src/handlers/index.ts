export { type BuiltinHandlerSet, buildBuiltinHandlers } from './build-builtin-handlers.js';
export { BUILTIN_HANDLER_TYPES, type BuiltinHandlerType, builtinHandlers } from './builtin-handlers.js';
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
  type DevicePluginManager,
  type ResourceView,
} from './device-plugin/index.js';
export {
  type ClaimRef,
  type ClaimsResult,
  createDraHandler,
  DRAPlugin,
  type DraDriverView,
  DraHandler,
  type DraService,
  draApis,
} from './dra/index.js';
export { createHandlerTable, type HandlerTable } from './handler-table.js';
export type {
  BuiltinHandler,
  HandlerServices,
  InstanceRef,
  PluginCallContext,
  PluginHandler,
  RegisterContext,
} from './types.js';
export {
  createDevicePluginHandler,
  createVersionedHandler,
  DevicePlugin,
  type DevicePluginHandlerOptions,
  type VersionedHandlerOptions,
} from './version-handlers.js';
