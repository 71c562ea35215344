import { randomUUID } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { Counter, Gauge, Histogram, type Registry as MetricsRegistry } from 'prom-client';
import type { LeaseState } from '../cluster/index.js';
import { type Clock, errorMessage, type Logger, loadOptionalPackage } from '../common/index.js';
import type { Registry } from '../registry/index.js';
import type { ClusterApi } from './api/api-types.js';
import type { ClusterConfig } from './config/cluster-config.js';

export interface DaemonCluster {
  api: ClusterApi;
  stop(): Promise<void>;
}

const LEASE_STATES: readonly LeaseState[] = [
  'none',
  'held',
  'unknown',
  'lost',
  'conflict',
  'revoked',
  'released',
];

/**
 * The cluster view inside the daemon: a writer fed by the registry's public
 * events and, unless turned off, a reader for the /v1/cluster routes. Loaded
 * only when `cluster:` is configured (the etcd client is slow to load). Start
 * never waits for etcd: both components retry in the background, and nothing
 * local depends on them.
 */
export async function startDaemonCluster(
  config: ClusterConfig,
  deps: { registry: Registry; metrics: MetricsRegistry; clock: Clock; logger: Logger; version: string },
): Promise<DaemonCluster> {
  const { ClusterReader, ClusterWriter, registryPluginSource } = await import('../cluster/index.js');
  // cluster/index.js uses etcd3's types only; cluster/etcd.js is what loads the package.
  const { createEtcdClient } = await loadOptionalPackage(
    'etcd3',
    'the cluster: section',
    () => import('../cluster/etcd.js'),
  );
  const logger = deps.logger.child({ component: 'cluster' });
  const instance = instanceId(config.instanceFile, logger);

  const publishLatency = new Histogram({
    name: 'berth_cluster_publish_latency_seconds',
    help: 'From a local registry change to etcd accepting its transaction.',
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [deps.metrics],
  });
  const writes = new Counter({
    name: 'berth_cluster_writes_total',
    help: 'Keys this daemon wrote to etcd, by operation (put, delete).',
    labelNames: ['op'] as const,
    registers: [deps.metrics],
  });
  const conflicts = new Counter({
    name: 'berth_cluster_node_conflicts_total',
    help: 'Times another instance was found publishing this node name (this daemon then does not publish).',
    registers: [deps.metrics],
  });

  let lastPublishedAt: number | undefined;
  const writer = new ClusterWriter({
    client: createEtcdClient(config.etcd),
    ownsClient: true,
    source: registryPluginSource(deps.registry),
    nodeName: config.nodeName,
    instance,
    prefix: config.prefix,
    leaseTtlSeconds: config.leaseTtlSeconds,
    stopMode: config.onShutdown,
    daemonVersion: deps.version,
    clock: deps.clock,
    logger,
    onEvent: (event) => {
      if (event.type === 'published') {
        lastPublishedAt = event.at;
        publishLatency.observe(event.latencyMs / 1000);
        writes.inc({ op: 'put' }, event.puts);
        writes.inc({ op: 'delete' }, event.deletes);
      } else if (event.type === 'conflict') {
        conflicts.inc();
        logger.error({ node: event.node, holder: event.holder }, event.message);
      } else {
        logger.info({ state: event.state, lease: event.lease }, 'cluster lease');
      }
    },
  });
  new Gauge({
    name: 'berth_cluster_lease_state',
    help: "This daemon's cluster lease: 1 for the current state (none, held, unknown, lost, conflict, revoked, released).",
    labelNames: ['state'] as const,
    registers: [deps.metrics],
    collect() {
      for (const state of LEASE_STATES) this.set({ state }, writer.leaseState === state ? 1 : 0);
    },
  });

  new Gauge({
    name: 'berth_cluster_last_publish_age_seconds',
    help: "Seconds since this daemon's last transaction to etcd was accepted; NaN before the first.",
    registers: [deps.metrics],
    collect() {
      this.set(
        lastPublishedAt === undefined ? Number.NaN : Math.max(0, (deps.clock.now() - lastPublishedAt) / 1000),
      );
    },
  });

  const reader = config.reader
    ? new ClusterReader({
        client: createEtcdClient(config.etcd),
        ownsClient: true,
        prefix: config.prefix,
        probeIntervalMs: config.probeIntervalMs,
        progressTimeoutMs: config.progressTimeoutMs,
        staleAfterMs: config.leaseTtlSeconds * 1000,
        clock: deps.clock,
        logger,
      })
    : undefined;
  if (reader !== undefined) {
    new Gauge({
      name: 'berth_cluster_view_stale',
      help: '1 while the fleet view cannot confirm it sees the etcd quorum (its data is kept), else 0.',
      registers: [deps.metrics],
      collect() {
        this.set(reader.status.stale ? 1 : 0);
      },
    });
    new Gauge({
      name: 'berth_cluster_view_staleness_seconds',
      help: 'Seconds since the fleet view last confirmed contact with etcd (list, watch data or probe).',
      registers: [deps.metrics],
      collect() {
        this.set(Math.max(0, (deps.clock.now() - reader.status.lastContactAt) / 1000));
      },
    });
    new Gauge({
      name: 'berth_cluster_view_relists',
      help: 'Re-lists of the fleet view since start (compaction, watch errors, stalled progress, recovery).',
      registers: [deps.metrics],
      collect() {
        this.set(reader.status.relists);
      },
    });
    new Gauge({
      name: 'berth_cluster_plugins',
      help: 'Plugins visible in the fleet view.',
      registers: [deps.metrics],
      collect() {
        this.set(reader.plugins().length);
      },
    });
  }

  await writer.start();
  await reader?.start();
  logger.info(
    { node: config.nodeName, instance, endpoints: config.etcd.endpoints },
    'publishing to the cluster view',
  );

  const api: ClusterApi = {
    nodes: () => reader?.nodes() ?? [],
    plugins: (filter) => reader?.plugins(filter) ?? [],
    status: () => reader?.status ?? { revision: '0', stale: true, lastContactAt: 0, relists: 0 },
    writer: () => ({
      node: config.nodeName,
      instance,
      leaseState: writer.leaseState,
      lease: writer.lease ?? null,
      inSync: writer.inSync,
      conflict: writer.conflict ?? null,
      lastError: writer.lastError ?? null,
      lastPublishedAt: lastPublishedAt === undefined ? null : new Date(lastPublishedAt).toISOString(),
    }),
    onEvent: (listener) => reader?.onEvent(listener) ?? (() => {}),
  };
  return {
    api,
    async stop() {
      await Promise.all([writer.stop(), reader?.stop()]);
    },
  };
}

/** The stable id of this installation: kept in the data dir so a restart adopts its own keys. */
function instanceId(path: string, logger: Logger): string {
  try {
    const text = readFileSync(path, 'utf8').trim();
    if (/^[0-9a-f-]{36}$/.test(text)) return text;
    logger.warn({ path }, 'cluster instance file is unreadable; starting a new instance');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') {
      logger.warn({ path, err: errorMessage(err) }, 'cannot read the cluster instance file');
    }
  }
  const id = randomUUID();
  try {
    writeFileSync(path, `${id}\n`, { mode: 0o600 });
  } catch (err) {
    logger.warn(
      { path, err: errorMessage(err) },
      'cannot keep the cluster instance id; a restart will not adopt',
    );
  }
  return id;
}
