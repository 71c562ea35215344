export { AsyncQueue, type AsyncQueueOptions } from './async-queue.js';
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
  type BerthErrorOptions,
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
export {
  type Lifecycle,
  LifecycleController,
  type LifecycleHooks,
  type LifecycleState,
} from './lifecycle.js';
export { type LogFn, type Logger, silentLogger } from './logger.js';
