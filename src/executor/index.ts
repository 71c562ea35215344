/**
 * @internal The plugin manager's part: the operation executor (one operation per socket path, backoff, the register and unregister operations). Exported for berth's own
 * folders, tests and benchmarks; use `berth/plugin-manager` or
 * `berth/plugin-node`, whose surface is stable.
 */
export {
  DEFAULT_EXECUTOR_BACKOFF,
  DEFAULT_EXECUTOR_OPTIONS,
  DEFAULT_MAX_CONCURRENT_REGISTRATIONS,
  DEFAULT_SLOT_BUDGETS,
  DEFAULT_YOUNG_SOCKET_RETRY,
  type SlotBudgets,
  type YoungSocketRetry,
} from './executor-options.js';
export {
  ExponentialBackoff,
  formatDuration,
  INITIAL_DURATION_BEFORE_RETRY_MS,
  MAX_DURATION_BEFORE_RETRY_MS,
} from './exponential-backoff.js';
export type { LaneUsage } from './lanes.js';
export { createOperationExecutor } from './operation-executor.js';
export {
  createOperationMap,
  type Operation,
  type OperationMap,
  type OperationMapOptions,
  type OperationOutcome,
  type OperationStatus,
  type RunOptions,
  type RunRefusal,
} from './operation-map.js';
export {
  DEFAULT_EXECUTOR_TIMEOUTS,
  type ExecutorTimeouts,
  type HandlerLookup,
  type OperationEvent,
  type OperationExecutor,
  type OperationExecutorOptions,
  type PluginGeneration,
} from './types.js';
