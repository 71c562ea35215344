/** @internal Per-operation signals under a long-lived one, without a listener per operation. */

export { whenAborted } from './abort-hub.js';
export { AbortScope } from './abort-scope.js';
/** @internal The per-subscriber queue behind every subscribe. */
export { AsyncQueue } from './async-queue.js';
export {
  type BackoffPolicy,
  type BackoffSetting,
  backoffDelayMs,
  backoffProblem,
  nextBackoffMs,
} from './backoff.js';
export { type Clock, type ClockTimer, sleep, systemClock } from './clock.js';
export {
  abortedError,
  BerthError,
  type BerthErrorCode,
  ERROR_CODES,
  errorCode,
  errorMessage,
  isBerthError,
} from './errors.js';
export type {
  DevicesChangedEvent,
  DevicesChangedReason,
  EventError,
  PluginEvent,
  PluginEventType,
  PluginInstanceInfo,
  PluginRef,
  RegistryEvent,
} from './events.js';
/** @internal A FIFO queue with O(1) shift, for queues of waiters (slots, the turn budget). */
export { Fifo } from './fifo.js';
export { flatString } from './flat-string.js';
/** @internal Go's %q quoting, shared by the object managers' and handlers' upstream-exact error texts. */
export { goQuote } from './go-format.js';
export {
  type Lifecycle,
  LifecycleComponent,
  LifecycleController,
  type LifecycleHooks,
  type LifecycleState,
} from './lifecycle.js';
/** @internal A module loaded on first use (the handlers' gRPC side). */
export { loadOnce } from './load-once.js';
export { type LogFn, type Logger, silentLogger } from './logger.js';
export { BERTH_MODES, type BerthMode, DEFAULT_BERTH_MODE } from './mode.js';
export { loadOptionalPackage, OPTIONAL_PACKAGES } from './optional-package.js';
/** @internal Shares one event-loop turn among many operations. */
export { TurnBudget, WORK_SLICE_MS } from './time-slice.js';
