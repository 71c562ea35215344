import type { FastifyInstance } from 'fastify';
import { BerthError } from '../../../common/index.js';
import type { CsiDriverCatalog, CsiVolumeService } from '../api-types.js';
import { csiDriverView, isoTime } from '../views.js';
import type {
  CsiCreatedVolumeView,
  CsiDriverListResponse,
  CsiPublicationResult,
  CsiVolumeDeleteResponse,
  CsiVolumeListResponse,
} from '../wire-types.js';

type VolumeParams = { driver: string; volumeId: string };
type PublicationParams = VolumeParams & { workload: string };

function objectBody(body: unknown): Record<string, unknown> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new BerthError('BERTH_BAD_REQUEST', 'body: expected a JSON object');
  }
  return body as Record<string, unknown>;
}

function noVolumes(): never {
  throw new BerthError('BERTH_NOT_FOUND', 'this daemon runs no CSI volume manager');
}

/**
 * GET /v1/csi/drivers: one entry per registered CSI driver, like a CSINode's
 * `spec.drivers` (name, nodeID, topologyKeys, allocatable.count) plus what
 * berth asked the driver (topology values, vendor version, capabilities,
 * readiness). An entry goes when the instance that set it deregisters.
 *
 * The volumes API (docs/api.md): POST /v1/csi/volumes (CreateVolume),
 * POST /v1/csi/volumes/{driver}/{volumeId}/publications (controller publish,
 * stage, publish), DELETE .../publications/{workload} (the negations),
 * DELETE /v1/csi/volumes/{driver}/{volumeId} (DeleteVolume), GET /v1/csi/volumes.
 */
export function csiRoutes(
  app: FastifyInstance,
  csi: CsiDriverCatalog | undefined,
  volumes: CsiVolumeService | undefined,
): void {
  app.get('/v1/csi/drivers', async (): Promise<CsiDriverListResponse> => {
    if (csi === undefined) throw new BerthError('BERTH_NOT_FOUND', 'this daemon runs no CSI handler');
    return { drivers: csi.drivers().map(csiDriverView) };
  });

  app.get('/v1/csi/volumes', async (): Promise<CsiVolumeListResponse> => {
    if (volumes === undefined) noVolumes();
    return {
      volumes: (await volumes.list()).map((v) => ({
        ...v,
        createdAt: isoTime(v.createdAt),
        publications: v.publications.map((p) => ({ ...p, publishedAt: isoTime(p.publishedAt) })),
      })),
    };
  });

  app.post('/v1/csi/volumes', async (request, reply) => {
    if (volumes === undefined) noVolumes();
    const body = objectBody(request.body);
    const created: CsiCreatedVolumeView = await volumes.create(
      body as Record<string, unknown> & { driver: string; name: string },
    );
    return reply.code(200).send(created);
  });

  app.post('/v1/csi/volumes/:driver/:volumeId/publications', async (request, reply) => {
    if (volumes === undefined) noVolumes();
    const { driver, volumeId } = request.params as VolumeParams;
    const body = objectBody(request.body);
    const result: CsiPublicationResult = await volumes.publish(
      driver,
      volumeId,
      body as Record<string, unknown> & { workload: string },
    );
    return reply.code(200).send(result);
  });

  app.delete(
    '/v1/csi/volumes/:driver/:volumeId/publications/:workload',
    async (request): Promise<CsiPublicationResult> => {
      if (volumes === undefined) noVolumes();
      const { driver, volumeId, workload } = request.params as PublicationParams;
      return volumes.unpublish(driver, volumeId, workload);
    },
  );

  app.delete('/v1/csi/volumes/:driver/:volumeId', async (request): Promise<CsiVolumeDeleteResponse> => {
    if (volumes === undefined) noVolumes();
    const { driver, volumeId } = request.params as VolumeParams;
    return volumes.delete(driver, volumeId);
  });
}
