export { pickPreferred } from './allocation-request.js';
export { AllocationStore, type StoredAllocation } from './allocation-store.js';
export { type ConnectOptions, createDevicePluginManager, DevicePluginManager } from './device-manager.js';
export { createDevicePluginBuiltin, type DevicePluginBuiltinHandler } from './device-plugin-builtin.js';
export { createDeviceManagerDelegate } from './device-plugin-handler.js';
export type { DevicePluginHandlerOptions, DevicePluginManagerOptions } from './device-plugin-options.js';
export type {
  AllocationRequest,
  AllocationResult,
  AllocationView,
  DevicesChangedEvent,
  DevicesChangedReason,
  DeviceView,
  ResourceView,
} from './types.js';
// The wire definitions and generated messages a test or example device plugin needs to answer berth.
export {
  AllocateResponseSchema,
  DevicePluginOptionsSchema,
  devicePluginService,
  deviceRegistrationService,
  type ListAndWatchResponse,
  ListAndWatchResponseSchema,
  PreferredAllocationResponseSchema,
  PreStartContainerResponseSchema,
  RegisterRequestSchema,
} from './wire.js';
