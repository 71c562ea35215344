import type { FastifyInstance, FastifyReply } from 'fastify';
import type { ClusterEvent, PluginFilter } from '../../../cluster/index.js';
import type { EventBus } from '../../event-bus.js';
import type { ClusterApi } from '../api-types.js';
import { type EventStreamOptions, serveEventStream } from '../event-stream.js';
import { errorBody } from '../http-errors.js';
import { queryString } from '../query-string.js';
import type { ClusterNodesResponse, ClusterPluginsResponse } from '../wire-types.js';

export interface ClusterRouteOptions {
  /** The cluster view's changes, with ids (the daemon feeds it from the reader). */
  events: EventBus<ClusterEvent> | undefined;
  stream: EventStreamOptions;
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
    const answer: ClusterNodesResponse = {
      ...view.status(),
      self: view.writer(),
      nodes: view.nodes().map((n) => ({ ...n, plugins: counts.get(n.node) ?? 0 })),
    };
    return answer;
  });

  app.get('/v1/cluster/plugins', (request, reply) => {
    const view = cluster();
    if (view === undefined) return disabled(reply);
    const filter: PluginFilter = {};
    for (const key of ['type', 'name', 'node'] as const) {
      const value = queryString(request.query, key);
      if (value !== undefined) filter[key] = value;
    }
    const answer: ClusterPluginsResponse = { ...view.status(), plugins: view.plugins(filter) };
    return answer;
  });

  app.get('/v1/cluster/events', (request, reply) => {
    const view = cluster();
    if (view === undefined || options.events === undefined) return disabled(reply);
    return serveEventStream(
      request,
      reply,
      { bus: options.events, filter: undefined, greeting: 'berth cluster events', view: (event) => event },
      options.stream,
    );
  });
}
