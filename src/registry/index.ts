export { createRegistryBridge, type RegistryBridge, type RegistryBridgeOptions } from './bridge.js';
export { createGrpcDispenser, type GrpcDispenser, type GrpcDispenserOptions } from './grpc-dispenser.js';
export { createRegistry } from './registry.js';
export type {
  PluginDispenser,
  Registry,
  RegistryOptions,
  SubscribeOptions,
  WaitForPluginOptions,
} from './types.js';
