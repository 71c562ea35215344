export { createLivenessProber, DEFAULT_LIVENESS } from './liveness.js';
export { createPluginManager, DEFAULT_RESYNC_PERIOD_MS } from './plugin-manager.js';
export type {
  DeregistrationReason,
  LivenessOptions,
  PluginManager,
  PluginManagerOptions,
  RegisteredPlugin,
  SocketState,
  SocketStatus,
} from './types.js';
