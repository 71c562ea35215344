/**
 * The berth daemon: the composition root that wires the plugin manager, the
 * registry, storage and the object manager together and serves the HTTP API.
 * This entry point is for embedding the daemon (what `berth run` does); the
 * API's wire types and the defaults are in the light `berth/daemon/contract`.
 */
export {
  type ConfigFlags,
  type DaemonConfig,
  formatConfigIssues,
  type HandlerConfig,
  loadDaemonConfig,
  type ObjectSourceConfig,
  type ResolveConfigOptions,
  readDaemonConfigFile,
  resolveDaemonConfig,
} from './config/config.js';
export type { ConfigFile } from './config/config-schema.js';
export { type ConfigSetting, type ExplainedConfig, explainDaemonConfig } from './config/config-sources.js';
export {
  BUILTIN_HANDLER_TYPES,
  DEFAULTS,
  dataDirLayout,
  defaultApiSocket,
  defaultDataDir,
  defaultPaths,
  EXAMPLE_PLUGIN_TYPE,
  EXAMPLE_PLUGIN_VERSIONS,
  LOG_FORMATS,
  LOG_LEVELS,
  SYSTEM_PATHS,
} from './config/defaults.js';
export { formatConfigDuration, parseDuration } from './config/duration.js';
export { formatHostPort, parseHostPort, type TcpAddress } from './config/listen-address.js';
export { planReload, type ReloadPlan, type ReloadTarget, reloadConfig } from './config-reload.js';
export { type ApiAddress, createDaemon, Daemon, type DaemonDeps } from './daemon.js';
/** @internal The API's event fan-out (the lifecycle contract test runs against it). */
export { EventBus } from './event-bus.js';
export { LogSink } from './log-sink.js';
export {
  createDaemonLogger,
  type DaemonLogger,
  type DaemonLoggerOptions,
  effectiveLogFormat,
} from './logging.js';
export { type ServiceState, type ServiceStatus, startServiceStatus } from './service-status.js';
export {
  handleReloadSignal,
  handleShutdownSignals,
  type ReloadSignalOptions,
  type ShutdownSignalsOptions,
} from './signals.js';
export { createSystemdNotifier, type SystemdNotifier } from './systemd-notify.js';
export { berthVersion } from './version.js';
