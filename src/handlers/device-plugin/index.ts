export { AllocationStore, type StoredAllocation } from './allocation-store.js';
export {
  type ConnectOptions,
  createDevicePluginManager,
  DevicePluginManager,
  pickPreferred,
} from './device-manager.js';
export { createDeviceManagerDelegate } from './device-plugin-handler.js';
export {
  DEVICE_PLUGIN_DEFAULTS,
  type DevicePluginManagerOptions,
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
export { devicePluginService, deviceRegistrationService } from './wire.js';
