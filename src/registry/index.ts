export { createRegistryBridge, OBSERVED_OPTION, type RegistryBridge } from './bridge.js';
export { createGrpcDispenser, type GrpcDispenser, type GrpcDispenserOptions } from './grpc-dispenser.js';
export { createRegistry } from './registry.js';
export { REGISTRY_DEFAULTS, type RegistryOptions } from './registry-options.js';
export type {
  PluginDispenser,
  Registry,
  StorageHealth,
  SubscribeOptions,
  WaitForPluginOptions,
} from './types.js';
