export { pickPreferred } from './allocation-request.js';
export { AllocationStore, type StoredAllocation } from './allocation-store.js';
export { type ConnectOptions, createDevicePluginManager, DevicePluginManager } from './device-manager.js';
export { createDevicePluginBuiltin, type DevicePluginBuiltinHandler } from './device-plugin-builtin.js';
export { createDeviceManagerDelegate } from './device-plugin-handler.js';
export type { DevicePluginHandlerOptions, DevicePluginManagerOptions } from './device-plugin-options.js';
// What a test or example device plugin needs to answer berth on the wire is device-plugin-wire.ts;
// the handler loads its gRPC side (device-plugin-grpc.ts) with the first plugin.
export type { ListAndWatchResponse } from './device-plugin-wire.js';
export type {
  AllocationRequest,
  AllocationResult,
  AllocationView,
  DevicesChangedEvent,
  DevicesChangedReason,
  DeviceView,
  ResourceView,
} from './types.js';
