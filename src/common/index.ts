export { AsyncQueue, type AsyncQueueOptions } from './async-queue.js';
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
  EventError,
  PluginEvent,
  PluginEventType,
  PluginInstanceInfo,
  PluginRef,
  RegistryEvent,
} from './events.js';
export { type LogFn, type Logger, silentLogger } from './logger.js';
