import type { FastifyInstance } from 'fastify';
import type { MetricsSource } from '../api-types.js';
import { errorBody } from '../http-errors.js';
import type { HealthResponse, ReadinessView, ReadyResponse, StatusView } from '../wire-types.js';

export interface HealthRouteOptions {
  /** The daemon's one readiness (also behind /v1/status). */
  readiness(): ReadinessView;
  status(): StatusView;
  metrics: MetricsSource;
}

/**
 * /healthz and /livez (the process is alive and its event loop turns: they
 * depend on nothing else), /readyz (the readiness checks; `?verbose` lists
 * each), /metrics (Prometheus), /v1/status.
 */
export function healthRoutes(app: FastifyInstance, options: HealthRouteOptions): void {
  app.get('/healthz', async (): Promise<HealthResponse> => ({ ok: true }));
  app.get('/livez', async (): Promise<HealthResponse> => ({ ok: true }));

  app.get('/readyz', async (request, reply) => {
    const report = options.readiness();
    if (Object.hasOwn((request.query ?? {}) as object, 'verbose')) {
      return reply
        .code(report.ready ? 200 : 503)
        .type('text/plain; charset=utf-8')
        .send(verboseReadiness(report));
    }
    if (report.ready) return { ready: true } satisfies ReadyResponse;
    const failed = report.checks.filter((check) => !check.ok);
    return reply
      .code(503)
      .send(
        errorBody(
          'BERTH_NOT_READY',
          `berth is not ready: ${failed.map((check) => `${check.name}: ${check.reason ?? 'failed'}`).join('; ')}`,
        ),
      );
  });

  app.get('/metrics', async (_request, reply) => {
    const text = await options.metrics.render();
    return reply.type(options.metrics.contentType).send(text);
  });

  app.get('/v1/status', async (): Promise<StatusView> => options.status());
}

/** kube-apiserver's verbose form: `[+]name ok` or `[-]name failed: reason` per check, then the verdict. */
export function verboseReadiness(report: ReadinessView): string {
  const lines = report.checks.map((check) =>
    check.ok ? `[+]${check.name} ok` : `[-]${check.name} failed: ${check.reason ?? 'unknown'}`,
  );
  lines.push(report.ready ? 'readyz check passed' : 'readyz check failed');
  return `${lines.join('\n')}\n`;
}
