/** The reconciler's default, re-exported as the plugin manager's `resyncPeriodMs` default. */
export { DEFAULT_RESYNC_PERIOD_MS } from '../reconciler/index.js';
export {
  createLivenessProber,
  DEFAULT_LIVENESS,
  type LivenessProber,
  type LivenessProberOptions,
} from './liveness.js';
export {
  ACTUAL_STATE_LABEL,
  createPluginManagerMetrics,
  DESIRED_STATE_LABEL,
  type PluginManagerMetrics,
  type PluginManagerMetricsOptions,
  TOTAL_PLUGINS_METRIC,
} from './metrics.js';
export { createPluginManager } from './plugin-manager.js';
export { DEFAULT_EVENT_QUEUE_SIZE } from './plugin-manager-options.js';
export type {
  DeregistrationReason,
  LivenessOptions,
  PluginManager,
  PluginManagerEvent,
  PluginManagerOptions,
  PluginManagerSubscribeOptions,
  RegisteredPlugin,
  SocketState,
  SocketStatus,
} from './types.js';
