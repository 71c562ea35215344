/**
 * The package entry point berth/common: what a library user needs. package.json
 * "exports" maps the subpath to this file, not to index.ts, which also carries
 * names only berth's own folders use (lint lets other folders in through
 * index.ts; the package does not export it, so users cannot reach them).
 * scripts/api-report.mjs keeps the names and their signatures in api/.
 */
export {
  type BackoffPolicy,
  type BackoffSetting,
  BerthError,
  type BerthErrorCode,
  type BerthMode,
  type Clock,
  type ClockTimer,
  type DevicesChangedEvent,
  type DevicesChangedReason,
  ERROR_CODES,
  type EventError,
  isBerthError,
  type Lifecycle,
  type LifecycleState,
  type LogFn,
  type Logger,
  type PluginEvent,
  type PluginEventType,
  type PluginInstanceInfo,
  type PluginRef,
  type RegistryEvent,
  silentLogger,
  systemClock,
} from './index.js';
