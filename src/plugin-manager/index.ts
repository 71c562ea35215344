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
export { createPluginManager, DEFAULT_RESYNC_PERIOD_MS } from './plugin-manager.js';
export type {
  ActualStateView,
  DeregistrationReason,
  DesiredStateView,
  LivenessOptions,
  PluginManager,
  PluginManagerOptions,
  RegisteredPlugin,
  SocketState,
  SocketStatus,
} from './types.js';
