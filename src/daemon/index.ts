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
  resolveDaemonConfig,
} from './config/config.js';
export type { ConfigFile } from './config/config-schema.js';
export {
  BUILTIN_HANDLER_TYPES,
  DEFAULTS,
  dataDirLayout,
  defaultDataDir,
  EXAMPLE_PLUGIN_TYPE,
  EXAMPLE_PLUGIN_VERSIONS,
  LOG_LEVELS,
} from './config/defaults.js';
export { formatConfigDuration, parseDuration } from './config/duration.js';
export { formatHostPort, parseHostPort, type TcpAddress } from './config/listen-address.js';
export { type ApiAddress, createDaemon, Daemon, type DaemonDeps, type DaemonState } from './daemon.js';
/** @internal The API's event fan-out (the lifecycle contract test runs against it). */
export { EventBus } from './event-bus.js';
export { createDaemonLogger, type DaemonLoggerOptions } from './logging.js';
export { handleShutdownSignals, type ShutdownSignalsOptions } from './signals.js';
export { berthVersion } from './version.js';
