export {
  createRegistryBridge,
  OBSERVED_OPTION,
  type RegistryBridge,
  type RegistryBridgeOptions,
} from './bridge.js';
export { createGrpcDispenser, type GrpcDispenser, type GrpcDispenserOptions } from './grpc-dispenser.js';
export { createRegistry } from './registry.js';
export { GRPC_DISPENSER_DEFAULTS, REGISTRY_DEFAULTS, type RegistryOptions } from './registry-options.js';
export type {
  PluginDispenser,
  Registry,
  StorageHealth,
  SubscribeOptions,
  WaitForPluginOptions,
} from './types.js';
