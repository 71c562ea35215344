import type { FastifyInstance } from 'fastify';
import { BerthError } from '../../../common/index.js';
import type { PodRegistry } from '../api-types.js';
import { errorBody } from '../http-errors.js';
import { validatePodDocument } from '../pod-validation.js';
import type { PodListResponse, PodResponse } from '../wire-types.js';

type PodParams = { namespace: string; name: string };

/** PUT/DELETE /v1/pods/{namespace}/{name}, GET /v1/pods: the workloads whose objects berth caches. */
export function podRoutes(app: FastifyInstance, pods: PodRegistry, maxPodBytes: number): void {
  app.get('/v1/pods', async (): Promise<PodListResponse> => ({ pods: pods.list() }));

  app.put(
    '/v1/pods/:namespace/:name',
    {
      bodyLimit: maxPodBytes,
      // fastify's own refusal, in berth's shape and naming the cap.
      errorHandler: (err, _request, reply) => {
        if ((err as { statusCode?: number }).statusCode !== 413) throw err;
        const message = `the pod document is larger than objects.maxPodBytes (${maxPodBytes} bytes)`;
        return reply.code(413).send(errorBody('BERTH_PAYLOAD_TOO_LARGE', message));
      },
    },
    async (request): Promise<PodResponse> => {
      const { namespace, name } = request.params as PodParams;
      return { pod: await pods.apply(validatePodDocument(request.body, namespace, name)) };
    },
  );

  app.delete('/v1/pods/:namespace/:name', async (request): Promise<PodResponse> => {
    const { namespace, name } = request.params as PodParams;
    const removed = await pods.delete(namespace, name);
    if (!removed) {
      throw new BerthError(
        'BERTH_NOT_FOUND',
        `pod ${namespace}/${name} is not registered; list registered pods with GET /v1/pods`,
      );
    }
    return { pod: removed };
  });
}
