import type { FastifyInstance } from 'fastify';
import { BerthError } from '../../../common/index.js';
import type { CsiDriverCatalog } from '../api-types.js';
import { isoTime } from '../views.js';

/**
 * GET /v1/csi/drivers: one entry per registered CSI driver, like a CSINode's
 * `spec.drivers` (name, nodeID, topologyKeys, allocatable.count) plus what
 * berth asked the driver (topology values, vendor version, capabilities,
 * readiness). An entry goes when the instance that set it deregisters.
 */
export function csiRoutes(app: FastifyInstance, csi: CsiDriverCatalog | undefined): void {
  app.get('/v1/csi/drivers', async () => {
    if (csi === undefined) throw new BerthError('BERTH_NOT_FOUND', 'this daemon runs no CSI handler');
    return {
      drivers: csi.drivers().map((d) => ({ ...d, registeredAt: isoTime(d.registeredAt) })),
    };
  });
}
