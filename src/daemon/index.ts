/**
 * The berth daemon: the composition root that wires the plugin manager, the
 * registry, storage and the object manager together and serves the HTTP API.
 */

/** @internal The HTTP API's pieces: the daemon composes them; tests use them with stand-ins. */
export { type ApiApp, type ApiAppOptions, createApiApp } from './api/api-server.js';
/** @internal What the API reads from the daemon's components. */
export type {
  ApiBackend,
  MetricsSource,
  ObjectReader,
  PluginCatalog,
  PodDocument,
  PodRegistry,
  PodSummary,
} from './api/api-types.js';
/** @internal */
export { eventView, isoTime, type PluginView, pluginView, socketView } from './api/views.js';
export {
  type ConfigFlags,
  type DaemonConfig,
  formatConfigIssues,
  type HandlerConfig,
  loadConfigFile,
  loadDaemonConfig,
  type ObjectSourceConfig,
  parseConfigDocument,
  type ResolveConfigOptions,
  resolveDaemonConfig,
} from './config/config.js';
export {
  type ConfigFile,
  type LogLevel,
  OBJECT_STRATEGIES,
  type ObjectStrategy,
} from './config/config-schema.js';
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
/** @internal */
export { EventBus, type EventBusOptions, type EventSubscribeOptions } from './event-bus.js';
export { createDaemonLogger, type DaemonLoggerOptions } from './logging.js';
export { handleShutdownSignals, type ShutdownSignalsOptions } from './signals.js';
export { berthVersion } from './version.js';
