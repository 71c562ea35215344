import type { FastifyInstance } from 'fastify';
import type { MetricsSource } from '../api-types.js';
import { errorBody } from '../http-errors.js';
import type { HealthResponse, ReadyResponse, StatusView } from '../wire-types.js';

export interface HealthRouteOptions {
  isReady(): boolean;
  readinessProblem?(): string | undefined;
  status(): StatusView;
  metrics: MetricsSource;
}

/** /healthz (process alive), /readyz (restored and scanned), /metrics (Prometheus), /v1/status. */
export function healthRoutes(app: FastifyInstance, options: HealthRouteOptions): void {
  app.get('/healthz', async (): Promise<HealthResponse> => ({ ok: true }));

  app.get('/readyz', async (_request, reply) => {
    if (options.isReady()) return { ready: true } satisfies ReadyResponse;
    const problem = options.readinessProblem?.();
    return reply
      .code(503)
      .send(
        errorBody(
          'BERTH_NOT_READY',
          problem === undefined
            ? 'berth is not ready: it is restoring state and scanning plugins, or shutting down'
            : `berth is not ready: ${problem}`,
        ),
      );
  });

  app.get('/metrics', async (_request, reply) => {
    const text = await options.metrics.render();
    return reply.type(options.metrics.contentType).send(text);
  });

  app.get('/v1/status', async (): Promise<StatusView> => options.status());
}
