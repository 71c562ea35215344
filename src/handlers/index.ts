export { type BuiltinHandlerSet, buildBuiltinHandlers } from './build-builtin-handlers.js';
export {
  BUILTIN_HANDLER_TYPES,
  type BuiltinHandlerEntry,
  type BuiltinHandlerOf,
  type BuiltinHandlerType,
  builtinHandlers,
  isBuiltinHandlerType,
} from './builtin-handlers.js';
export { createHandlerTable, type HandlerTable, type HandlerTableOptions } from './handler-table.js';
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
