import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import Fastify, { type FastifyInstance } from 'fastify';
import type { Clock, Logger } from '../../common/index.js';
import type { ApiBackend } from './api-types.js';
import { acceptEmptyJsonOnDelete } from './empty-json-body.js';
import { type EventStreamOptions, StreamBudget } from './event-stream.js';
import { errorBody, httpStatusFor, retryAfterFor, toApiError } from './http-errors.js';
import { clusterRoutes } from './routes/cluster.js';
import { csiRoutes } from './routes/csi.js';
import { deviceRoutes } from './routes/devices.js';
import { draRoutes } from './routes/dra.js';
import { eventRoutes } from './routes/events.js';
import { healthRoutes } from './routes/health.js';
import { objectRoutes } from './routes/objects.js';
import { pluginRoutes } from './routes/plugins.js';
import { podRoutes } from './routes/pods.js';
import { socketRoutes } from './routes/sockets.js';

export interface ApiAppOptions {
  clock: Clock;
  logger: Logger;
  bodyLimitBytes: number;
  /** Largest PUT /v1/pods body (`objects.maxPodBytes`); default bodyLimitBytes. */
  podBodyLimitBytes?: number;
  sseQueueSize: number;
  sseHeartbeatMs: number;
  /** Most event-stream clients at once per listener, over every stream route (default unbounded). */
  maxEventStreams?: number;
  /** Unread bytes an event-stream client may leave before it is cut off as lagged. */
  eventStreamBufferBytes?: number;
  /** Told when an API limit is hit ('cap': event-stream cap, 'lagged': a client cut off). */
  onLimit?: (what: 'cap' | 'lagged') => void;
  /** Told about every answered request (route pattern, `unmatched` for none); event streams are not answers. */
  onAnswered?: (route: string, method: string, status: number, seconds: number) => void;
}

export type RequestHandler = (req: IncomingMessage, res: ServerResponse) => void;

export interface ApiApp {
  app: FastifyInstance;
  /** The request handler to serve on any number of http.Servers (unix socket, TCP). */
  handler: RequestHandler;
}

function noJsonSchemas(): never {
  throw new Error(
    "berth's API routes declare no JSON schemas (fastify's compilers are not loaded): check the input in the route",
  );
}

/**
 * The HTTP API as one fastify app. berth serves it on its unix socket and,
 * optionally, on TCP: fastify's serverFactory hands over the request handler,
 * and the daemon attaches it to the servers it owns.
 */
export async function createApiApp(backend: ApiBackend, options: ApiAppOptions): Promise<ApiApp> {
  let captured: RequestHandler | undefined;
  const app = Fastify({
    logger: false,
    bodyLimit: options.bodyLimitBytes,
    return503OnClosing: true,
    // Path parameters up to 1 KiB reach the routes, which bound them themselves (a CSI
    // workload name over 128 bytes is a 400 naming it, not a missing route).
    routerOptions: { maxParamLength: 1024 },
    // A malformed URL (bad percent-encoding) is answered in berth's error shape too.
    frameworkErrors: (err, _request, reply) => {
      const apiError = toApiError(err, options.bodyLimitBytes);
      // biome-ignore lint/suspicious/noExplicitAny: fastify types frameworkErrors' reply too narrowly
      void (reply as any).code(httpStatusFor(apiError.code)).send(errorBody(apiError.code, apiError.message));
    },
    // The routes check their input in berth's own code and declare no JSON schemas, so fastify's
    // ajv and fast-json-stringify compilers are never needed: not loading them at construction
    // saves a few milliseconds of every start. A route that declares a schema fails app.ready().
    schemaController: { compilersFactory: { buildValidator: noJsonSchemas, buildSerializer: noJsonSchemas } },
    serverFactory: (handler) => {
      captured = handler;
      // Never listened on: the daemon's own servers carry the traffic.
      return createServer();
    },
  });

  const onAnswered = options.onAnswered;
  if (onAnswered) {
    app.addHook('onResponse', async (request, reply) => {
      onAnswered(
        request.routeOptions.url ?? 'unmatched',
        request.method,
        reply.statusCode,
        reply.elapsedTime / 1000,
      );
    });
  }

  app.setErrorHandler((err, request, reply) => {
    const apiError = toApiError(err, options.bodyLimitBytes);
    const status = httpStatusFor(apiError.code);
    if (status >= 500) options.logger.error({ err, url: request.url }, 'API request failed');
    else options.logger.debug({ code: apiError.code, url: request.url }, apiError.message);
    const retryAfter = retryAfterFor(apiError);
    if (retryAfter !== undefined) void reply.header('retry-after', String(retryAfter));
    return reply.code(status).send(errorBody(apiError.code, apiError.message));
  });

  app.setNotFoundHandler((request, reply) =>
    reply
      .code(404)
      .send(
        errorBody(
          'BERTH_NOT_FOUND',
          `no route ${request.method} ${request.url.split('?')[0]}; the API is described in docs/api.md`,
        ),
      ),
  );

  acceptEmptyJsonOnDelete(app);
  pluginRoutes(app, backend.plugins);
  socketRoutes(app, () => backend.sockets());
  const stream: EventStreamOptions = {
    clock: options.clock,
    logger: options.logger,
    queueSize: options.sseQueueSize,
    heartbeatMs: options.sseHeartbeatMs,
    budget: new StreamBudget(options.maxEventStreams ?? Number.POSITIVE_INFINITY),
    ...(options.eventStreamBufferBytes === undefined
      ? {}
      : { maxBufferedBytes: options.eventStreamBufferBytes }),
    ...(options.onLimit === undefined ? {} : { onLimit: options.onLimit }),
  };
  eventRoutes(app, backend.events, stream);
  podRoutes(app, backend.pods, options.podBodyLimitBytes ?? options.bodyLimitBytes);
  clusterRoutes(app, backend.cluster ?? (() => undefined), { events: backend.clusterEvents, stream });
  objectRoutes(app, backend.objects);
  csiRoutes(app, backend.csi, backend.csiVolumes);
  draRoutes(app, backend.dra);
  if (backend.devices) deviceRoutes(app, backend.devices);
  healthRoutes(app, {
    readiness: () => backend.readiness(),
    status: () => backend.status(),
    metrics: backend.metrics,
  });

  await app.ready();
  const handler = captured;
  if (!handler) throw new Error('fastify did not call serverFactory');
  return { app, handler };
}
