import type { FastifyInstance } from 'fastify';
import type { EventBus } from '../../event-bus.js';
import { type EventStreamOptions, serveEventStream } from '../event-stream.js';
import { queryString } from '../query-string.js';
import { eventView } from '../views.js';

/** GET /v1/events[?type=T]: server-sent events with ids, one bounded queue per client. */
export function eventRoutes(app: FastifyInstance, bus: EventBus, options: EventStreamOptions): void {
  app.get('/v1/events', (request, reply) =>
    serveEventStream(
      request,
      reply,
      { bus, filter: queryString(request.query, 'type'), greeting: 'berth events', view: eventView },
      options,
    ),
  );
}
