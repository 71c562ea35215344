import { homedir } from 'node:os';
import { join } from 'node:path';

/**
 * Every default of the daemon, in one place. The file layout under the data
 * directory is part of berth's external contract (see DESIGN.md).
 */
export const DEFAULTS = {
  logLevel: 'info',
  resyncPeriodMs: 10_000,
  rescanIntervalMs: 10_000,
  dialTimeoutMs: 10_000,
  getInfoTimeoutMs: 1_000,
  notifyTimeoutMs: 5_000,
  livenessEnabled: true,
  livenessPeriodMs: 10_000,
  livenessTimeoutMs: 5_000,
  livenessFailureThreshold: 3,
  subscriberQueueSize: 1024,
  objectStrategy: 'Watch',
  objectTtlMs: 60_000,
  shutdownTimeoutMs: 10_000,
  /** Events held for one slow /v1/events client before older ones are dropped (a `lagged` marker says so). */
  sseQueueSize: 1024,
  sseHeartbeatMs: 15_000,
  /** Largest accepted request body (PUT /v1/pods). */
  bodyLimitBytes: 1024 * 1024,
} as const;

/** The plugin type `berth example-plugin` registers with; the daemon accepts it out of the box. */
/** Log levels `--log-level` and `logLevel` accept (pino's). */
export const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const;

export const EXAMPLE_PLUGIN_TYPE = 'example.com/berth-example';
export const EXAMPLE_PLUGIN_VERSIONS: readonly string[] = ['v1beta1', 'v1beta2'];

/** Plugin types with a built-in handler that a config file cannot replace. */
export const BUILTIN_HANDLER_TYPES = ['CSIPlugin', 'DevicePlugin', 'DRAPlugin'] as const;

export type Env = Readonly<Record<string, string | undefined>>;

/** `$BERTH_DATA_DIR`, else `$XDG_STATE_HOME/berth`, else `~/.local/state/berth`. */
export function defaultDataDir(env: Env = process.env, home: string = homedir()): string {
  if (env.BERTH_DATA_DIR) return env.BERTH_DATA_DIR;
  if (env.XDG_STATE_HOME) return join(env.XDG_STATE_HOME, 'berth');
  return join(home, '.local', 'state', 'berth');
}

/** The fixed layout under a data directory. */
export function dataDirLayout(dataDir: string) {
  return {
    pluginsDir: join(dataDir, 'plugins_registry'),
    statePath: join(dataDir, 'state.db'),
    apiSocketPath: join(dataDir, 'berth.sock'),
    objectsRoot: join(dataDir, 'objects'),
    devicePluginsDir: join(dataDir, 'device-plugins'),
    devicesDbPath: join(dataDir, 'devices.db'),
  };
}
