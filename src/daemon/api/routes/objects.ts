import type { FastifyInstance } from 'fastify';
import { BerthError } from '../../../common/index.js';
import type { ObjectResource } from '../../../objects/index.js';
import type { ObjectReader } from '../api-types.js';
import type { ObjectResponse } from '../wire-types.js';

const RESOURCES: readonly string[] = ['secrets', 'configmaps'] satisfies ObjectResource[];

type ObjectParams = { resource: string; namespace: string; name: string };

/** GET /v1/objects/{secrets|configmaps}/{namespace}/{name}: an object a registered pod references. */
export function objectRoutes(app: FastifyInstance, objects: ObjectReader): void {
  app.get('/v1/objects/:resource/:namespace/:name', async (request): Promise<ObjectResponse> => {
    const { resource, namespace, name } = request.params as ObjectParams;
    if (!RESOURCES.includes(resource)) {
      throw new BerthError(
        'BERTH_BAD_REQUEST',
        `resource ${JSON.stringify(resource)} is not served; use secrets or configmaps`,
      );
    }
    return objects.get(resource as ObjectResource, namespace, name);
  });
}
