export { createHandlerTable, type HandlerTable, type HandlerTableOptions } from './handler-table.js';
export type { PluginCallContext, PluginHandler, RegisterContext } from './types.js';
export {
  type BuiltinHandler,
  type BuiltinHandlerOptions,
  builtinHandlerTypes,
  CSIPlugin,
  createCsiHandler,
  createDevicePluginHandler,
  createDraHandler,
  createVersionedHandler,
  DevicePlugin,
  type DevicePluginHandlerOptions,
  DRAPlugin,
  devicePluginApiVersion,
  draServicesSupported,
  type VersionedHandlerOptions,
} from './version-handlers.js';
