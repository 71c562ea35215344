/**
 * @internal The plugin manager's part: the operation executor (one operation per socket path, backoff, the register and unregister operations). Exported for berth's own
 * folders, tests and benchmarks; use `berth/plugin-manager` or
 * `berth/plugin-node`, whose surface is stable.
 */
export {
  DEFAULT_EXECUTOR_BACKOFF,
  DEFAULT_MAX_CONCURRENT_REGISTRATIONS,
  type SlotBudgets,
  type YoungSocketRetry,
} from './executor-options.js';
export { createOperationExecutor } from './operation-executor.js';
export type { OperationStatus, RunRefusal } from './operation-map.js';
export {
  DEFAULT_EXECUTOR_TIMEOUTS,
  type ExecutorTimeouts,
  type OperationEvent,
  type OperationExecutor,
} from './types.js';
