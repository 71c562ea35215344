export { pickPreferred } from './allocation-request.js';
export { AllocationStore, type StoredAllocation } from './allocation-store.js';
export { type ConnectOptions, createDevicePluginManager, DevicePluginManager } from './device-manager.js';
export { createDevicePluginBuiltin, type DevicePluginBuiltinHandler } from './device-plugin-builtin.js';
export { createDeviceManagerDelegate } from './device-plugin-handler.js';
export {
  DEVICE_PLUGIN_DEFAULTS,
  type DevicePluginHandlerOptions,
  type DevicePluginManagerOptions,
  devicePluginHandlerOptions,
  MAX_DEVICE_ID_LENGTH,
} from './device-plugin-options.js';
export {
  checkRegisterRequest,
  KUBELET_SOCKET_NAME,
  SUPPORTED_DEVICE_PLUGIN_VERSIONS,
} from './legacy-registration-server.js';
export type {
  AllocationRequest,
  AllocationResult,
  AllocationView,
  DevicePluginOptionsView,
  DevicesChangedEvent,
  DevicesChangedReason,
  DeviceView,
  RegistrationPath,
  ResourceState,
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
