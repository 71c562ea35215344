import type { FastifyInstance, FastifyReply } from 'fastify';
import type { ClusterEvent, PluginFilter } from '../../../cluster/index.js';
import { AsyncQueue, type Clock, type ClockTimer, type Logger } from '../../../common/index.js';
import type { ClusterApi } from '../api-types.js';
import { errorBody } from '../http-errors.js';
import { queryString } from '../query-string.js';

export interface ClusterRouteOptions {
  clock: Clock;
  logger: Logger;
  queueSize: number;
  heartbeatMs: number;
}

/**
 * GET /v1/cluster/nodes, GET /v1/cluster/plugins[?type=&name=&node=] and
 * GET /v1/cluster/events (server-sent events). Every answer carries the
 * view's revision and `stale`: a reader cut off from quorum keeps answering
 * with its last data and says so.
 */
export function clusterRoutes(
  app: FastifyInstance,
  cluster: () => ClusterApi | undefined,
  options: ClusterRouteOptions,
): void {
  const disabled = (reply: FastifyReply) =>
    reply
      .code(404)
      .send(
        errorBody(
          'BERTH_CLUSTER_DISABLED',
          'the cluster view is not configured on this daemon; add a `cluster:` section with etcd endpoints',
        ),
      );

  app.get('/v1/cluster/nodes', (_request, reply) => {
    const view = cluster();
    if (view === undefined) return disabled(reply);
    const plugins = view.plugins({});
    const counts = new Map<string, number>();
    for (const p of plugins) counts.set(p.node, (counts.get(p.node) ?? 0) + 1);
    return {
      ...view.status(),
      self: view.writer(),
      nodes: view.nodes().map((n) => ({ ...n, plugins: counts.get(n.node) ?? 0 })),
    };
  });

  app.get('/v1/cluster/plugins', (request, reply) => {
    const view = cluster();
    if (view === undefined) return disabled(reply);
    const filter: PluginFilter = {};
    for (const key of ['type', 'name', 'node'] as const) {
      const value = queryString(request.query, key);
      if (value !== undefined) filter[key] = value;
    }
    return { ...view.status(), plugins: view.plugins(filter) };
  });

  app.get('/v1/cluster/events', (_request, reply) => {
    const view = cluster();
    if (view === undefined) return disabled(reply);
    reply.hijack();
    const res = reply.raw;
    // One bounded queue per client: a slow client is told it lagged and the stream ends.
    const queue = new AsyncQueue<ClusterEvent>({ maxSize: options.queueSize });
    const unsubscribe = view.onEvent((event) => queue.push(event));
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
      connection: 'close',
      'x-accel-buffering': 'no',
    });
    res.write(': berth cluster events\n\n');
    let timer: ClockTimer | undefined;
    const beat = () => {
      if (res.writableEnded || res.destroyed) return;
      res.write(': heartbeat\n\n');
      timer = options.clock.setTimeout(beat, options.heartbeatMs);
    };
    timer = options.clock.setTimeout(beat, options.heartbeatMs);
    res.on('close', () => queue.close());
    void (async () => {
      try {
        for await (const event of queue) {
          if (res.destroyed) break;
          res.write(`event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`);
        }
      } catch (err) {
        if (!res.destroyed) res.write(`event: lagged\ndata: ${JSON.stringify({ message: String(err) })}\n\n`);
      } finally {
        unsubscribe();
        if (timer) options.clock.clearTimeout(timer);
        if (!res.writableEnded) res.end();
      }
    })().catch((err: unknown) => options.logger.warn({ err }, 'cluster event stream failed'));
    return reply;
  });
}
