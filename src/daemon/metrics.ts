import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import type { PluginEvent } from '../common/index.js';

/**
 * berth's own metrics, beside the plugin manager's (plugin_manager_total_plugins
 * and the berth_* registration metrics, which it registers on the same registry).
 */
export interface DaemonMetrics {
  registry: Registry;
  /** Counts an event published on the daemon's event stream. */
  countEvent(event: PluginEvent): void;
  objectRequests: Counter<'resource' | 'result'>;
  sourceRequests: Counter<'resource' | 'verb'>;
  /** Where berth_object_watches_open reads from at scrape time (set once the object managers exist). */
  setWatchCounter(read: () => { secrets: number; configmaps: number }): void;
  /** Counts one answered API request: the route pattern (not the raw URL), method, status and latency. */
  observeRequest(route: string, method: string, status: number, seconds: number): void;
}

export interface DaemonMetricsOptions {
  registry?: Registry;
  /** Current number of /v1/events clients, read at scrape time. */
  sseClients: () => number;
  /** Log lines lost per stream (stdout, stderr) because the sink failed, read at scrape time. */
  logLinesDropped?: () => Record<string, number>;
  /** Node.js process metrics (CPU, memory, event loop) with the berth_ prefix. Default true. */
  processMetrics?: boolean;
  /** berth's version, for berth_build_info. */
  version: string;
}

/**
 * How often prom-client's event-loop monitor (the berth_nodejs_eventloop_lag_*
 * gauges) samples; its default is 10 ms. The monitor's timer wakes the
 * daemon at that rate all its life: at 10 ms it was most of an idle daemon's
 * CPU (1.23% of a core with nothing registered, 0.43% without the monitor, on
 * the 2-core test machine; issue 20's goal is 1%). The gauges report the
 * timer's intervals, so an idle loop reads about this much (0.1 s), and a
 * turn that blocked for 30 ms about 0.13 s.
 */
export const EVENT_LOOP_SAMPLE_MS = 100;

export function createDaemonMetrics(options: DaemonMetricsOptions): DaemonMetrics {
  const registry = options.registry ?? new Registry();
  if (options.processMetrics ?? true) {
    collectDefaultMetrics({
      register: registry,
      prefix: 'berth_',
      eventLoopMonitoringPrecision: EVENT_LOOP_SAMPLE_MS,
    });
  }

  new Gauge({
    name: 'berth_build_info',
    help: 'Always 1; the labels say which berth (version) runs on which Node.js (node).',
    labelNames: ['version', 'node'] as const,
    registers: [registry],
  }).set({ version: options.version, node: process.versions.node }, 1);
  const apiRequests = new Counter({
    name: 'berth_api_requests_total',
    help: 'API requests answered, by route pattern (unmatched for an unknown route), method and status.',
    labelNames: ['route', 'method', 'status'] as const,
    registers: [registry],
  });
  const apiLatency = new Histogram({
    name: 'berth_api_request_duration_seconds',
    help: 'From an API request arriving to its answer being sent, by route pattern and method.',
    labelNames: ['route', 'method'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [registry],
  });
  const events = new Counter({
    name: 'berth_registry_events_total',
    help: 'Plugin events published by the daemon (registered, deregistered, updated, failed, discovered, socket-removed, storage-error), by type.',
    labelNames: ['type'] as const,
    registers: [registry],
  });
  const objectRequests = new Counter({
    name: 'berth_object_cache_requests_total',
    help: 'Object reads through the object manager: hit (served from cache), miss (the source was asked), error.',
    labelNames: ['resource', 'result'] as const,
    registers: [registry],
  });
  const sourceRequests = new Counter({
    name: 'berth_object_source_requests_total',
    help: 'Requests the object manager made to its source, by verb (get, list, watch).',
    labelNames: ['resource', 'verb'] as const,
    registers: [registry],
  });
  const readDropped = options.logLinesDropped;
  new Counter({
    name: 'berth_log_lines_dropped_total',
    help: 'Log lines lost because their stream (stdout, stderr) failed (ENOSPC, EPIPE) or stayed blocked past the buffer.',
    labelNames: ['stream'] as const,
    registers: [registry],
    collect() {
      if (!readDropped) return;
      this.reset();
      for (const [stream, count] of Object.entries(readDropped())) this.inc({ stream }, count);
    },
  });
  let readWatches: (() => { secrets: number; configmaps: number }) | undefined;
  new Gauge({
    name: 'berth_object_watches_open',
    help: 'List/watch loops the object manager has open on its source (Watch strategy).',
    labelNames: ['resource'] as const,
    registers: [registry],
    collect() {
      const open = readWatches?.();
      if (!open) return;
      this.set({ resource: 'secrets' }, open.secrets);
      this.set({ resource: 'configmaps' }, open.configmaps);
    },
  });
  const sseClients = options.sseClients;
  new Gauge({
    name: 'berth_sse_clients',
    help: 'Clients currently following GET /v1/events.',
    registers: [registry],
    collect() {
      this.set(sseClients());
    },
  });

  return {
    registry,
    countEvent: (event) => events.inc({ type: event.type }),
    objectRequests,
    sourceRequests,
    setWatchCounter: (read) => {
      readWatches = read;
    },
    observeRequest: (route, method, status, seconds) => {
      apiRequests.inc({ route, method, status: String(status) });
      apiLatency.observe({ route, method }, seconds);
    },
  };
}
