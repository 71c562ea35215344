import type { ObjectManagersStats } from '../objects/index.js';
import type { StorageHealth } from '../registry/index.js';
import type { StorageCorruptionReport } from '../storage/index.js';
import type { ClusterApi, PluginCatalog, SocketStatus } from './api/api-types.js';
import { isoTime } from './api/views.js';
import type { ReadinessView, StatusView, StorageHealthView } from './api/wire-types.js';
import type { DaemonConfig } from './config/config.js';

export interface StatusInput {
  version: string;
  state: string;
  startedAt: number;
  now: number;
  config: DaemonConfig;
  api: { socket: string; tcp: string | null };
  registry: PluginCatalog;
  sockets: SocketStatus[];
  objects: ObjectManagersStats;
  sseClients: number;
  corruption: StorageCorruptionReport | undefined;
  /** Whether registry writes reach the database (registry.storageHealth()). */
  storageHealth?: StorageHealth;
  /** The daemon's readiness (the same as /readyz). */
  readiness: ReadinessView;
  /** The last time the state database vanished and was re-created, if it did. */
  recreated?: { at: number; message: string } | undefined;
  /** The plugin types the daemon has handlers for, and whether each is built in. */
  handlers: Array<{ type: string; builtin: boolean }>;
  /** The cluster view, when configured. */
  cluster: ClusterApi | undefined;
}

/** The GET /v1/status document (and `berth status`). */
export function buildStatus(input: StatusInput): StatusView {
  let plugins = 0;
  let instances = 0;
  for (const type of input.registry.types()) {
    for (const current of input.registry.listPlugins(type) ?? []) {
      plugins += 1;
      instances += input.registry.listInstances(type, current.name).length;
    }
  }
  const socketStates: Record<SocketStatus['state'], number> = {
    pending: 0,
    registered: 0,
    failed: 0,
    backoff: 0,
    observed: 0,
    stale: 0,
    unreachable: 0,
  };
  for (const socket of input.sockets) socketStates[socket.state] += 1;
  const { config, corruption } = input;
  return {
    version: input.version,
    pid: process.pid,
    state: input.state,
    ready: input.readiness.ready,
    readiness: input.readiness.checks,
    startedAt: isoTime(input.startedAt),
    uptimeSeconds: Math.max(0, Math.round((input.now - input.startedAt) / 1000)),
    dataDir: config.dataDir,
    pluginsDir: config.pluginsDir,
    mode: config.mode,
    deprecatedPluginsDir: config.deprecatedPluginsDir ?? null,
    api: input.api,
    counts: {
      types: input.registry.types().length,
      plugins,
      instances,
      sockets: { total: input.sockets.length, ...socketStates },
      pods: input.objects.pods,
      secrets: input.objects.secrets.objects,
      configMaps: input.objects.configMaps.objects,
      watchesOpen: input.objects.secrets.watchesOpen + input.objects.configMaps.watchesOpen,
      eventClients: input.sseClients,
    },
    objects: { source: config.objects.source.type, strategy: input.objects.strategy },
    handlers: input.handlers.map(({ type, builtin }) => ({
      type,
      builtin,
      plugins: input.registry.listPlugins(type)?.length ?? 0,
    })),
    cluster: clusterStatus(input.cluster, input.now),
    storage: {
      path: config.statePath,
      health: storageHealthView(input.storageHealth),
      recreated: input.recreated
        ? { at: isoTime(input.recreated.at), message: input.recreated.message }
        : null,
      corruption: corruption
        ? {
            path: corruption.path,
            movedTo: corruption.movedTo,
            at: isoTime(corruption.at),
            error: { code: corruption.error.code, message: corruption.error.message },
          }
        : null,
    },
  };
}

function storageHealthView(health: StorageHealth | undefined): StorageHealthView | null {
  if (health === undefined) return null;
  if (health.state === 'ok') return { state: 'ok', failures: health.failures };
  return {
    state: 'failing',
    failures: health.failures,
    since: isoTime(health.since),
    lastError: { code: health.lastError.code, message: health.lastError.message },
    pendingDeletes: health.pendingDeletes,
    retryAt: health.retryAt === undefined ? null : isoTime(health.retryAt),
  };
}

function clusterStatus(cluster: ClusterApi | undefined, now: number): StatusView['cluster'] {
  if (cluster === undefined) return null;
  const writer = cluster.writer();
  const published =
    typeof writer.lastPublishedAt === 'string' ? Date.parse(writer.lastPublishedAt) : Number.NaN;
  const reader = cluster.status();
  return {
    node: String(writer.node ?? ''),
    leaseState: String(writer.leaseState ?? 'none'),
    lastPublishAgeSeconds: Number.isNaN(published) ? null : Math.max(0, Math.round((now - published) / 1000)),
    stale: reader.stale,
  };
}
