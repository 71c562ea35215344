import { homedir } from 'node:os';
import {
  type ConfigFlags,
  type DaemonConfig,
  type ResolveConfigOptions,
  readDaemonConfigFile,
  resolveDaemonConfig,
} from './config.js';
import { defaultPaths } from './paths.js';

/** One resolved setting and where it came from. */
export interface ConfigSetting {
  /** The key in DaemonConfig terms (`timeouts.dialMs`, `objects.source.root`). */
  key: string;
  value: unknown;
  /** `default`, `flag --data-dir`, `file /etc/berth/config.yaml`, `env $BERTH_DATA_DIR`. */
  source: string;
}

export interface ExplainedConfig {
  config: DaemonConfig;
  settings: ConfigSetting[];
}

const FLAGS: Record<string, keyof ConfigFlags> = {
  dataDir: 'dataDir',
  pluginsDir: 'pluginsDir',
  listen: 'listen',
  logLevel: 'logLevel',
  logFormat: 'logFormat',
  'api.tokenFile': 'apiTokenFile',
  mode: 'observe',
  force: 'force',
};

const FLAG_NAMES: Record<keyof ConfigFlags, string> = {
  config: '--config',
  dataDir: '--data-dir',
  pluginsDir: '--plugins-dir',
  listen: '--listen',
  logLevel: '--log-level',
  logFormat: '--log-format',
  apiTokenFile: '--api-token-file',
  observe: '--observe',
  force: '--force',
};

/** Config keys whose file key is spelled differently (besides the `Ms` suffix durations carry). */
const FILE_KEYS: Record<string, string> = { 'api.metricsAnonymous': 'metrics.anonymous' };

/** Keys laid out under the data directory by default: they come from wherever the data directory did. */
const UNDER_DATA_DIR = new Set([
  'pluginsDir',
  'statePath',
  'apiSocketPath',
  'objects.source.root',
  'api.tokenFile',
]);

/**
 * `berth config show`: the configuration `berth run` would use with these
 * flags, each value with where it came from.
 */
export function explainDaemonConfig(flags: ConfigFlags, options: ResolveConfigOptions = {}): ExplainedConfig {
  const { file, path, options: resolved } = readDaemonConfigFile(flags, options);
  const config = resolveDaemonConfig(file, flags, resolved);
  const env = options.env ?? process.env;
  const defaults = defaultPaths({
    env,
    home: options.home ?? homedir(),
    ...(options.euid === undefined ? {} : { euid: options.euid }),
  });
  const fileSource = `file ${path ?? ''}`;
  const dataDirSource =
    flags.dataDir !== undefined
      ? 'flag --data-dir'
      : file.dataDir !== undefined
        ? fileSource
        : defaults.dataDirSource === 'env'
          ? env.BERTH_DATA_DIR
            ? 'env $BERTH_DATA_DIR'
            : 'env $XDG_STATE_HOME'
          : config.scope === 'system'
            ? 'default (root)'
            : 'default';

  const settings: ConfigSetting[] = [];
  for (const [key, value] of leaves(config)) {
    if (key === 'scope' || key === 'configFile') continue;
    settings.push({ key, value, source: sourceOf(key) });
  }
  return { config, settings };

  function sourceOf(key: string): string {
    const flag = FLAGS[key] ?? FLAGS[key.split('.')[0] as string];
    if (flag !== undefined && flags[flag] !== undefined) return `flag ${FLAG_NAMES[flag]}`;
    if (key === 'dataDir') return dataDirSource;
    if (inFile(file, FILE_KEYS[key] ?? key.replace(/Ms(?=\.|$)/g, ''))) return fileSource;
    if (key === 'apiSocketPath' && config.scope === 'system') return 'default (root)';
    if (UNDER_DATA_DIR.has(key)) return dataDirSource;
    if (key === 'objects.source.kubeconfig' && env.KUBECONFIG) return 'env $KUBECONFIG';
    return 'default';
  }
}

/** Whether the file sets this key, or a key above it that holds a plain value. */
function inFile(file: unknown, key: string): boolean {
  let node = file;
  for (const part of key.split('.')) {
    if (node === null || typeof node !== 'object' || Array.isArray(node)) return true;
    if (!Object.hasOwn(node, part)) return false;
    node = (node as Record<string, unknown>)[part];
  }
  return true;
}

/** Dotted keys and plain values of a config (arrays are values). */
function leaves(value: unknown, prefix = ''): Array<[string, unknown]> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return [[prefix, value]];
  const out: Array<[string, unknown]> = [];
  for (const [key, child] of Object.entries(value)) {
    out.push(...leaves(child, prefix === '' ? key : `${prefix}.${key}`));
  }
  return out;
}
