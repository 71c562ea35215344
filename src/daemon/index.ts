/**
 * The berth daemon: the composition root that wires the plugin manager, the
 * registry, storage and the object manager together and serves the HTTP API.
 * This entry point is for embedding the daemon (what `berth run` does); the
 * API's wire types and the defaults are in the light `berth/daemon/contract`.
 */
export { loadDaemonConfig, resolveDaemonConfig } from './config/config.js';
export type { ConfigFile } from './config/config-schema.js';
export { explainDaemonConfig } from './config/config-sources.js';
export {
  BUILTIN_HANDLER_TYPES,
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
export { formatHostPort, parseHostPort, type TcpAddress } from './config/listen-address.js';
export { reloadConfig } from './config-reload.js';
export { createDaemon, Daemon } from './daemon.js';
/** @internal The API's event fan-out (the lifecycle contract test runs against it). */
export { EventBus } from './event-bus.js';
export { LogSink } from './log-sink.js';
export { createDaemonLogger } from './logging.js';
export { startServiceStatus } from './service-status.js';
export { handleReloadSignal, handleShutdownSignals } from './signals.js';
export { createSystemdNotifier } from './systemd-notify.js';
export { berthVersion } from './version.js';
