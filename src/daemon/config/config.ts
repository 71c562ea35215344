import { closeSync, constants, fstatSync, openSync, readSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { parse as parseYaml } from 'yaml';
import type { z } from 'zod';
import type { EtcdConnectionSettings } from '../../cluster/index.js';
import {
  type BackoffPolicy,
  BerthError,
  type BerthMode,
  backoffProblem,
  errorMessage,
} from '../../common/index.js';
import { BUILTIN_HANDLER_TYPES, builtinHandlers } from '../../handlers/builtin-handlers.js';
import { type ClusterConfig, resolveClusterConfig } from './cluster-config.js';
import {
  type ConfigFile,
  configFileSchema,
  type LogFormat,
  type LogLevel,
  type ObjectStrategy,
} from './config-schema.js';
import {
  DEFAULTS,
  dataDirLayout,
  type Env,
  EXAMPLE_PLUGIN_TYPE,
  EXAMPLE_PLUGIN_VERSIONS,
  LOG_FORMATS,
  LOG_LEVELS,
} from './defaults.js';
import { parseHostPort, type TcpAddress } from './listen-address.js';
import { assertPluginsDirClear } from './own-sockets.js';
import { defaultPaths, type PathScope, SYSTEM_PATHS } from './paths.js';

/** A handler for an extra plugin type, accepting the listed versions. */
export interface HandlerConfig {
  type: string;
  versions: string[];
}

export type ObjectSourceConfig =
  | { type: 'directory'; root: string }
  | {
      type: 'etcd';
      endpoints: string[];
      prefix?: string;
      tls?: EtcdConnectionSettings['tls'];
      auth?: EtcdConnectionSettings['auth'];
    }
  | { type: 'kubernetes'; kubeconfig: string };

/** The daemon's fully resolved configuration: every default filled in, every path absolute. */
export interface DaemonConfig {
  /** `system` as root with no data directory chosen (/var/lib/berth, /run/berth), else `user`. */
  scope: PathScope;
  /** The config file that was read (absolute), if any: `--config`, else /etc/berth/config.yaml as root. */
  configFile?: string;
  dataDir: string;
  pluginsDir: string;
  deprecatedPluginsDir?: string;
  statePath: string;
  apiSocketPath: string;
  listen?: TcpAddress;
  logLevel: LogLevel;
  /** registrar (default) or observe (`--observe`): see README "On a node with a kubelet". */
  mode: BerthMode;
  /** Register even where a running kubelet seems to own the plugins directory (`--force`). */
  force: boolean;
  logFormat: LogFormat;
  /** Versioned handlers besides CSIPlugin/DevicePlugin/DRAPlugin (includes the example type). */
  handlers: HandlerConfig[];
  resyncPeriodMs: number;
  rescanIntervalMs: number;
  timeouts: { dialMs: number; getInfoMs: number; notifyMs: number };
  /** Retry of a socket whose registration failed. */
  backoff: BackoffPolicy;
  liveness: { periodMs: number; timeoutMs: number; failureThreshold: number; pingsPerPeriod: number } | false;
  registry: { subscriberQueueSize: number };
  objects: {
    source: ObjectSourceConfig;
    strategy: ObjectStrategy;
    ttlMs: number;
    /** Caps on what PUT /v1/pods accepts: pods at once, distinct objects one pod references, its JSON size. */
    maxPods: number;
    maxReferencesPerPod: number;
    maxPodBytes: number;
  };
  shutdownTimeoutMs: number;
  api: {
    bodyLimitBytes: number;
    sseQueueSize: number;
    sseHeartbeatMs: number;
    /** The bearer token TCP clients send; created on first start (0600). */
    tokenFile: string;
    /** Host names accepted in the Host header of TCP requests, besides IP literals and localhost. */
    allowedHosts: string[];
    maxConnections: number;
    maxEventStreams: number;
    eventStreamBufferBytes: number;
    /** Recent events each stream route holds for clients that reconnect with Last-Event-ID. */
    eventRingSize: number;
    headersTimeoutMs: number;
    idleTimeoutMs: number;
    /** TCP connections that have not authenticated yet: their own cap (oldest idle closed over it) and idle timeout. */
    maxUnauthenticatedConnections: number;
    unauthenticatedIdleTimeoutMs: number;
    /** Serve /metrics on TCP without the token. */
    metricsAnonymous: boolean;
  };
  /** TLS for the TCP listener; with clientCA, mutual TLS (a verified client certificate authenticates). */
  tls?: { cert: string; key: string; clientCA?: string };
  /**
   * Each built-in handler's options (HandlerServices.options), durations in
   * milliseconds (`wipeDelay` → `wipeDelayMs`); absent keys take the handler's defaults.
   */
  handlerOptions: Record<string, Record<string, unknown>>;
  /** The fleet view on etcd; absent (off) unless the file has a `cluster:` section. */
  cluster?: ClusterConfig;
}

/** What `berth run` takes on the command line; flags override the config file. */
export interface ConfigFlags {
  config?: string;
  dataDir?: string;
  pluginsDir?: string;
  listen?: string;
  logLevel?: string;
  logFormat?: string;
  apiTokenFile?: string;
  /** `--observe`: mode observe, whatever the file says. */
  observe?: boolean;
  /** `--force` */
  force?: boolean;
}

export interface ResolveConfigOptions {
  env?: Env;
  cwd?: string;
  home?: string;
  /** Effective user id (default the process's): 0 selects the system paths. */
  euid?: number;
  /** The file the config was read from, when it was not `--config` (the system config file). */
  configFile?: string;
  /** The system config file read as root with no `--config` (default /etc/berth/config.yaml; tests move it). */
  systemConfigFile?: string;
}

/** Turns zod issues into one line per problem, each starting with the key's path. */
export function formatConfigIssues(issues: readonly z.core.$ZodIssue[]): string[] {
  const lines: string[] = [];
  for (const issue of issues) {
    const base = formatPath(issue.path);
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) lines.push(`${joinPath(base, key)}: unknown key`);
      continue;
    }
    lines.push(`${base || '(top level)'}: ${issue.message}`);
  }
  return lines;
}

function formatPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const part of path) {
    out = typeof part === 'number' ? `${out}[${part}]` : joinPath(out, String(part));
  }
  return out;
}

function joinPath(base: string, key: string): string {
  return base === '' ? key : `${base}.${key}`;
}

function configError(source: string, problem: string): BerthError {
  return new BerthError('BERTH_CONFIG_INVALID', `config ${source}: ${problem}`);
}

/** Validates an already-parsed config document; `source` names it in errors (usually the file path). */
export function parseConfigDocument(document: unknown, source: string): ConfigFile {
  if (document === null || document === undefined) return {};
  if (typeof document !== 'object' || Array.isArray(document)) {
    throw configError(source, 'expected a mapping of keys at the top level');
  }
  const result = configFileSchema().safeParse(document);
  if (!result.success) throw configError(source, formatConfigIssues(result.error.issues).join('; '));
  return result.data;
}

/** Reads and validates a YAML or JSON config file (JSON is YAML, so one parser reads both). */
export function loadConfigFile(path: string): ConfigFile {
  let text: string;
  try {
    text = readConfigText(path);
  } catch (err) {
    if (err instanceof BerthError) throw err;
    const code = (err as NodeJS.ErrnoException).code;
    const why = code === 'ENOENT' ? 'no such file' : errorMessage(err);
    throw configError(path, `cannot read it (${why}); check the --config path`);
  }
  let document: unknown;
  try {
    document = parseYaml(text, { prettyErrors: false });
  } catch (err) {
    throw configError(path, `not valid YAML or JSON: ${errorMessage(err).split('\n')[0]}`);
  }
  return parseConfigDocument(document, path);
}

/** A config file larger than this is refused before it is read. */
export const CONFIG_FILE_MAX_BYTES = 1024 * 1024;

/**
 * Reads the config file only if it is a regular file of at most
 * CONFIG_FILE_MAX_BYTES: opened non-blocking, so a FIFO cannot hang `berth
 * run`, and checked with fstat before reading, so /dev/zero cannot grow
 * memory without bound.
 */
function readConfigText(path: string): string {
  const fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) throw configError(path, 'not a regular file; point --config at a YAML or JSON file');
    if (st.size > CONFIG_FILE_MAX_BYTES) {
      throw configError(path, `larger than ${CONFIG_FILE_MAX_BYTES} bytes; a berth config is a few lines`);
    }
    const buffer = Buffer.alloc(st.size);
    let read = 0;
    while (read < st.size) {
      const n = readSync(fd, buffer, read, st.size - read, read);
      if (n === 0) break;
      read += n;
    }
    return buffer.subarray(0, read).toString('utf8');
  } finally {
    closeSync(fd);
  }
}

function expandPath(path: string, base: string, home: string): string {
  if (path === '~') return home;
  if (path.startsWith('~/')) return join(home, path.slice(2));
  return isAbsolute(path) ? path : resolve(base, path);
}

/**
 * Merges defaults, the config file (if any) and flags into a DaemonConfig.
 * Paths in the file are relative to the file's directory; paths in flags to the working directory.
 */
export function resolveDaemonConfig(
  file: ConfigFile,
  flags: ConfigFlags = {},
  options: ResolveConfigOptions = {},
): DaemonConfig {
  const env = options.env ?? process.env;
  const cwd = options.cwd ?? process.cwd();
  const home = options.home ?? homedir();
  const configFile =
    flags.config !== undefined
      ? resolve(cwd, flags.config)
      : options.configFile && resolve(options.configFile);
  const fileBase = configFile ? dirname(configFile) : cwd;
  const fromFile = (p: string | undefined) => (p === undefined ? undefined : expandPath(p, fileBase, home));
  const fromFlag = (p: string | undefined) => (p === undefined ? undefined : expandPath(p, cwd, home));

  const defaults = defaultPaths({ env, home, ...(options.euid === undefined ? {} : { euid: options.euid }) });
  const scope: PathScope = flags.dataDir === undefined ? defaults.scope : 'user';
  const dataDir = fromFlag(flags.dataDir) ?? fromFile(file.dataDir) ?? resolve(cwd, defaults.dataDir);
  const layout = dataDirLayout(dataDir);
  // The system socket stays in /run/berth even when the file moves the data directory,
  // so a client with no flags still finds it.
  const apiSocketPath = scope === 'system' ? defaults.apiSocketPath : layout.apiSocketPath;
  const pluginsDir = fromFlag(flags.pluginsDir) ?? fromFile(file.pluginsDir) ?? layout.pluginsDir;

  let listen = file.listen;
  if (flags.listen !== undefined) {
    listen = parseHostPort(flags.listen);
    if (!listen) {
      throw new BerthError(
        'BERTH_CONFIG_INVALID',
        `--listen: expected HOST:PORT (e.g. 127.0.0.1:7878), got ${JSON.stringify(flags.listen)}`,
      );
    }
  }
  let logLevel: LogLevel = file.logLevel ?? DEFAULTS.logLevel;
  if (flags.logLevel !== undefined) {
    if (!(LOG_LEVELS as readonly string[]).includes(flags.logLevel)) {
      throw new BerthError(
        'BERTH_CONFIG_INVALID',
        `--log-level: expected one of ${LOG_LEVELS.join('|')}, got ${JSON.stringify(flags.logLevel)}`,
      );
    }
    logLevel = flags.logLevel as LogLevel;
  }
  let logFormat: LogFormat = file.logFormat ?? DEFAULTS.logFormat;
  if (flags.logFormat !== undefined) {
    if (!(LOG_FORMATS as readonly string[]).includes(flags.logFormat)) {
      throw new BerthError(
        'BERTH_CONFIG_INVALID',
        `--log-format: expected one of ${LOG_FORMATS.join('|')}, got ${JSON.stringify(flags.logFormat)}`,
      );
    }
    logFormat = flags.logFormat as LogFormat;
  }

  const handlers: HandlerConfig[] = (file.handlers ?? []).map((h) => ({
    type: h.type,
    versions: h.versions,
  }));
  if (!handlers.some((h) => h.type === EXAMPLE_PLUGIN_TYPE)) {
    handlers.unshift({ type: EXAMPLE_PLUGIN_TYPE, versions: [...EXAMPLE_PLUGIN_VERSIONS] });
  }

  const liveness = file.liveness ?? {};
  const deprecatedPluginsDir = fromFile(file.deprecatedPluginsDir);
  const config: DaemonConfig = {
    scope,
    dataDir,
    pluginsDir,
    statePath: layout.statePath,
    apiSocketPath,
    logLevel,
    mode: flags.observe === true ? 'observe' : (file.mode ?? DEFAULTS.mode),
    force: flags.force === true || (file.force ?? DEFAULTS.force),
    logFormat,
    handlers,
    resyncPeriodMs: file.resyncPeriod ?? DEFAULTS.resyncPeriodMs,
    rescanIntervalMs: file.rescanInterval ?? DEFAULTS.rescanIntervalMs,
    timeouts: {
      dialMs: file.timeouts?.dial ?? DEFAULTS.dialTimeoutMs,
      getInfoMs: file.timeouts?.getInfo ?? DEFAULTS.getInfoTimeoutMs,
      notifyMs: file.timeouts?.notify ?? DEFAULTS.notifyTimeoutMs,
    },
    backoff: resolveBackoff(file.backoff),
    liveness:
      (liveness.enabled ?? DEFAULTS.livenessEnabled)
        ? {
            periodMs: liveness.period ?? DEFAULTS.livenessPeriodMs,
            timeoutMs: liveness.timeout ?? DEFAULTS.livenessTimeoutMs,
            failureThreshold: liveness.failureThreshold ?? DEFAULTS.livenessFailureThreshold,
            pingsPerPeriod: liveness.pingsPerPeriod ?? DEFAULTS.livenessPingsPerPeriod,
          }
        : false,
    registry: { subscriberQueueSize: file.registry?.subscriberQueueSize ?? DEFAULTS.subscriberQueueSize },
    objects: {
      source: resolveObjectSource(
        file,
        layout.objectsRoot,
        fromFile,
        env.KUBECONFIG ?? join(home, '.kube', 'config'),
      ),
      strategy: file.objects?.strategy ?? DEFAULTS.objectStrategy,
      ttlMs: file.objects?.ttl ?? DEFAULTS.objectTtlMs,
      maxPods: file.objects?.maxPods ?? DEFAULTS.maxPods,
      maxReferencesPerPod: file.objects?.maxReferencesPerPod ?? DEFAULTS.maxReferencesPerPod,
      maxPodBytes: file.objects?.maxPodBytes ?? DEFAULTS.maxPodBytes,
    },
    shutdownTimeoutMs: file.shutdownTimeout ?? DEFAULTS.shutdownTimeoutMs,
    handlerOptions: resolveHandlerOptions(file, fromFile),
    api: {
      bodyLimitBytes: DEFAULTS.bodyLimitBytes,
      sseQueueSize: DEFAULTS.sseQueueSize,
      sseHeartbeatMs: DEFAULTS.sseHeartbeatMs,
      tokenFile: fromFlag(flags.apiTokenFile) ?? fromFile(file.api?.tokenFile) ?? layout.tokenFile,
      allowedHosts: file.api?.allowedHosts ?? [],
      maxConnections: file.api?.maxConnections ?? DEFAULTS.apiMaxConnections,
      maxEventStreams: file.api?.maxEventStreams ?? DEFAULTS.apiMaxEventStreams,
      eventStreamBufferBytes: file.api?.eventStreamBufferBytes ?? DEFAULTS.apiEventStreamBufferBytes,
      eventRingSize: file.api?.eventRingSize ?? DEFAULTS.apiEventRingSize,
      headersTimeoutMs: file.api?.headersTimeout ?? DEFAULTS.apiHeadersTimeoutMs,
      idleTimeoutMs: file.api?.idleTimeout ?? DEFAULTS.apiIdleTimeoutMs,
      maxUnauthenticatedConnections:
        file.api?.maxUnauthenticatedConnections ?? DEFAULTS.apiMaxUnauthenticatedConnections,
      unauthenticatedIdleTimeoutMs:
        file.api?.unauthenticatedIdleTimeout ?? DEFAULTS.apiUnauthenticatedIdleTimeoutMs,
      metricsAnonymous: file.metrics?.anonymous ?? false,
    },
  };
  if (file.tls !== undefined) {
    const tls: NonNullable<DaemonConfig['tls']> = {
      cert: fromFile(file.tls.cert) as string,
      key: fromFile(file.tls.key) as string,
    };
    if (file.tls.clientCA !== undefined) tls.clientCA = fromFile(file.tls.clientCA) as string;
    config.tls = tls;
  }
  if (configFile) config.configFile = configFile;
  if (deprecatedPluginsDir !== undefined) config.deprecatedPluginsDir = deprecatedPluginsDir;
  if (listen !== undefined) config.listen = listen;
  const cluster = resolveClusterConfig(file.cluster, dataDir, (p) => fromFile(p) ?? p, env);
  if (cluster !== undefined) config.cluster = cluster;
  const source = config.objects.source;
  if (source.type === 'etcd' && source.endpoints.length === 0 && cluster !== undefined) {
    // No endpoints of its own: the etcd object source shares the cluster view's connection.
    config.objects.source = { ...source, ...structuredClone(cluster.etcd) };
  }
  assertPluginsDirClear(config);
  return config;
}

/** `handlerOptions` of the file, each section resolved by its handler type; keys left out are left to the handlers' defaults. */
function resolveHandlerOptions(
  file: ConfigFile,
  fromFile: (p: string | undefined) => string | undefined,
): Record<string, Record<string, unknown>> {
  const out: Record<string, Record<string, unknown>> = {};
  for (const type of BUILTIN_HANDLER_TYPES) {
    const section = file.handlerOptions?.[type];
    if (section !== undefined) {
      out[type] = builtinHandlers[type].options.resolve(section, (path) => fromFile(path) ?? path);
    }
  }
  return out;
}

function resolveObjectSource(
  file: ConfigFile,
  defaultRoot: string,
  fromFile: (p: string | undefined) => string | undefined,
  defaultKubeconfig: string,
): ObjectSourceConfig {
  const source = file.objects?.source;
  if (source === undefined || source.type === 'directory') {
    return { type: 'directory', root: fromFile(source?.root) ?? defaultRoot };
  }
  if (source.type === 'etcd') {
    const etcd: ObjectSourceConfig = { type: 'etcd', endpoints: source.endpoints ?? [] };
    if (source.prefix !== undefined) etcd.prefix = source.prefix;
    if (source.tls !== undefined) {
      etcd.tls = { ca: fromFile(source.tls.ca) ?? source.tls.ca };
      if (source.tls.cert !== undefined) etcd.tls.cert = fromFile(source.tls.cert) ?? source.tls.cert;
      if (source.tls.key !== undefined) etcd.tls.key = fromFile(source.tls.key) ?? source.tls.key;
    }
    if (source.auth !== undefined) etcd.auth = { ...source.auth };
    return etcd;
  }
  return { type: 'kubernetes', kubeconfig: fromFile(source.kubeconfig) ?? defaultKubeconfig };
}

/**
 * `berth run`'s whole configuration step: read the file named by --config,
 * else (as root, with no data directory chosen) /etc/berth/config.yaml when
 * it exists, then apply flags.
 */
export function loadDaemonConfig(flags: ConfigFlags, options: ResolveConfigOptions = {}): DaemonConfig {
  const { file, options: resolved } = readDaemonConfigFile(flags, options);
  return resolveDaemonConfig(file, flags, resolved);
}

/** The config file `berth run` reads with these flags (parsed and checked), and the options to resolve it with. */
export function readDaemonConfigFile(
  flags: ConfigFlags,
  options: ResolveConfigOptions = {},
): { file: ConfigFile; path?: string; options: ResolveConfigOptions } {
  const cwd = options.cwd ?? process.cwd();
  if (flags.config !== undefined) {
    const path = resolve(cwd, flags.config);
    return { file: loadConfigFile(path), path, options };
  }
  const systemFile = systemConfigFile(flags, options);
  if (systemFile !== undefined) {
    const file = loadOptionalConfigFile(systemFile);
    if (file !== undefined)
      return { file, path: systemFile, options: { ...options, configFile: systemFile } };
  }
  return { file: {}, options };
}

/** The system config file, when this process runs with the system paths. */
function systemConfigFile(flags: ConfigFlags, options: ResolveConfigOptions): string | undefined {
  if (flags.dataDir !== undefined) return undefined;
  const context = {
    ...(options.env === undefined ? {} : { env: options.env }),
    ...(options.euid === undefined ? {} : { euid: options.euid }),
  };
  if (defaultPaths(context).scope !== 'system') return undefined;
  return options.systemConfigFile ?? SYSTEM_PATHS.configFile;
}

/**
 * A config file nobody asked for: one that is missing or cannot be opened
 * (no such file, no permission) is no config at all; one that exists and is
 * invalid is an error naming the file and the key, like `--config`'s.
 */
function loadOptionalConfigFile(path: string): ConfigFile | undefined {
  try {
    closeSync(openSync(path, constants.O_RDONLY | constants.O_NONBLOCK));
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR' || code === 'EACCES' || code === 'EPERM') return undefined;
  }
  return loadConfigFile(path);
}

/**
 * The file's backoff over the default. The schema bounds each field; what is
 * left to check is that the cap is not below the first delay.
 */
function resolveBackoff(file: ConfigFile['backoff']): BackoffPolicy {
  const policy: BackoffPolicy = {
    initialMs: file?.initial ?? DEFAULTS.backoff.initialMs,
    maxMs: file?.max ?? DEFAULTS.backoff.maxMs,
    factor: file?.factor ?? DEFAULTS.backoff.factor,
  };
  if (backoffProblem(policy) !== undefined) {
    throw new BerthError(
      'BERTH_CONFIG_INVALID',
      `backoff.max: ${policy.maxMs} ms is below backoff.initial (${policy.initialMs} ms); raise backoff.max or lower backoff.initial`,
    );
  }
  return policy;
}
