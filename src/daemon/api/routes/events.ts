import type { FastifyInstance } from 'fastify';
import type { Clock, Logger } from '../../../common/index.js';
import type { EventBus } from '../../event-bus.js';
import { errorBody } from '../http-errors.js';
import { queryString } from '../query-string.js';
import { streamSse } from '../sse.js';

export interface EventRouteOptions {
  clock: Clock;
  queueSize: number;
  heartbeatMs: number;
  logger: Logger;
  /** Most clients following the stream at once; one more gets 503 BERTH_TOO_MANY_CLIENTS. */
  maxClients?: number;
  /** Unread bytes a client may leave in its socket buffer before it is cut off as lagged. */
  maxBufferedBytes?: number;
  /** Told when a client is refused for the cap ('cap') or cut off for lagging ('lagged'). */
  onLimit?: (what: 'cap' | 'lagged') => void;
}

/** GET /v1/events[?type=T]: server-sent events, one bounded queue per client. */
export function eventRoutes(app: FastifyInstance, bus: EventBus, options: EventRouteOptions): void {
  let clients = 0;
  const maxClients = options.maxClients ?? Number.POSITIVE_INFINITY;
  app.get('/v1/events', (request, reply) => {
    if (clients >= maxClients) {
      options.onLimit?.('cap');
      return reply
        .code(503)
        .header('retry-after', '1')
        .send(
          errorBody(
            'BERTH_TOO_MANY_CLIENTS',
            `berth already streams events to ${maxClients} clients (api.maxEventStreams); retry later`,
          ),
        );
    }
    clients += 1;
    const pluginType = queryString(request.query, 'type');
    // Closing it (the client went away) aborts the subscription; the bus ends it when the daemon stops.
    const clientGone = new AbortController();
    const events = bus.subscribe(pluginType, { queueSize: options.queueSize, signal: clientGone.signal });
    const subscription = {
      [Symbol.asyncIterator]: () => events[Symbol.asyncIterator](),
      close: () => clientGone.abort(),
    };
    // The stream outlives fastify's request/reply cycle: take the raw response over.
    reply.hijack();
    void streamSse(reply.raw, subscription, {
      clock: options.clock,
      heartbeatMs: options.heartbeatMs,
      ...(options.maxBufferedBytes === undefined ? {} : { maxBufferedBytes: options.maxBufferedBytes }),
      onLagged: () => options.onLimit?.('lagged'),
    })
      .catch((err: unknown) => options.logger.warn({ err }, 'event stream ended with an error'))
      .finally(() => {
        clients -= 1;
      });
    return reply;
  });
}
