import type { FastifyInstance } from 'fastify';
import type { Clock, Logger } from '../../../common/index.js';
import type { EventBus } from '../../event-bus.js';
import { streamSse } from '../sse.js';
import { queryString } from './plugins.js';

export interface EventRouteOptions {
  clock: Clock;
  queueSize: number;
  heartbeatMs: number;
  logger: Logger;
}

/** GET /v1/events[?type=T]: server-sent events, one bounded queue per client. */
export function eventRoutes(app: FastifyInstance, bus: EventBus, options: EventRouteOptions): void {
  app.get('/v1/events', (request, reply) => {
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
    void streamSse(reply.raw, subscription, { clock: options.clock, heartbeatMs: options.heartbeatMs }).catch(
      (err: unknown) => options.logger.warn({ err }, 'event stream ended with an error'),
    );
  });
}
