import { homedir } from 'node:os';
import { join } from 'node:path';

/**
 * Where berth keeps its files when no path was chosen. The daemon and the CLI
 * both resolve them here, so `berth plugins` with no flags finds the daemon
 * `berth run` with no flags started.
 *
 * - As root (euid 0) with no data directory chosen (`--data-dir` or
 *   `$BERTH_DATA_DIR`): the system layout, as node agents lay themselves out
 *   (state under /var/lib, the socket under /run, the config under /etc).
 * - Otherwise the per-user XDG layout: everything under the data directory.
 */
export const SYSTEM_PATHS = {
  dataDir: '/var/lib/berth',
  /** The runtime directory: berth creates it (0700) for its socket. */
  runtimeDir: '/run/berth',
  apiSocketPath: '/run/berth/berth.sock',
  /** Read when it exists and no `--config` was given. */
  configFile: '/etc/berth/config.yaml',
} as const;

export type Env = Readonly<Record<string, string | undefined>>;

/** What the defaults depend on; each defaults to the running process's. */
export interface PathContext {
  env?: Env;
  home?: string;
  /** Effective user id; 0 selects the system layout. */
  euid?: number;
}

export type PathScope = 'system' | 'user';

/** The default paths in effect, and why. */
export interface DefaultPaths {
  scope: PathScope;
  dataDir: string;
  /** Where the default data directory came from: `$BERTH_DATA_DIR`, `$XDG_STATE_HOME`, or the built-in default. */
  dataDirSource: 'env' | 'default';
  /** The API socket when the data directory is this default one. */
  apiSocketPath: string;
  /** The config file read when none is named (the system layout only). */
  configFile?: string;
}

function effectiveUid(): number {
  return typeof process.geteuid === 'function' ? process.geteuid() : -1;
}

/**
 * The user layout's data directory: `$BERTH_DATA_DIR`, else
 * `$XDG_STATE_HOME/berth`, else `~/.local/state/berth`.
 */
export function defaultDataDir(env: Env = process.env, home: string = homedir()): string {
  if (env.BERTH_DATA_DIR) return env.BERTH_DATA_DIR;
  if (env.XDG_STATE_HOME) return join(env.XDG_STATE_HOME, 'berth');
  return join(home, '.local', 'state', 'berth');
}

/**
 * The defaults for a process that named no data directory on its command
 * line. Root gets the system layout unless `$BERTH_DATA_DIR` names another
 * directory (then that directory holds everything, as for any user).
 */
export function defaultPaths(context: PathContext = {}): DefaultPaths {
  const env = context.env ?? process.env;
  const euid = context.euid ?? effectiveUid();
  if (euid === 0 && !env.BERTH_DATA_DIR) {
    return {
      scope: 'system',
      dataDir: SYSTEM_PATHS.dataDir,
      dataDirSource: 'default',
      apiSocketPath: SYSTEM_PATHS.apiSocketPath,
      configFile: SYSTEM_PATHS.configFile,
    };
  }
  const dataDir = defaultDataDir(env, context.home ?? homedir());
  return {
    scope: 'user',
    dataDir,
    dataDirSource: env.BERTH_DATA_DIR || env.XDG_STATE_HOME ? 'env' : 'default',
    apiSocketPath: dataDirLayout(dataDir).apiSocketPath,
  };
}

/**
 * The API socket a client talks to: in `dataDir` when one was named,
 * else the default one.
 */
export function defaultApiSocket(dataDir: string | undefined, context: PathContext = {}): string {
  return dataDir === undefined ? defaultPaths(context).apiSocketPath : dataDirLayout(dataDir).apiSocketPath;
}

/** The fixed layout under a data directory. */
export function dataDirLayout(dataDir: string) {
  return {
    pluginsDir: join(dataDir, 'plugins_registry'),
    statePath: join(dataDir, 'state.db'),
    apiSocketPath: join(dataDir, 'berth.sock'),
    objectsRoot: join(dataDir, 'objects'),
    tokenFile: join(dataDir, 'api-token'),
    /** The TCP address(es) the running daemon serves its API on, one per line (0600; gone after stop). */
    apiAddressPath: join(dataDir, 'api-address'),
  };
}
