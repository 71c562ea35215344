import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { BerthError } from '../../../common/index.js';
import type { ClaimRef } from '../../../handlers/dra/index.js';
import type { DraDriverService } from '../api-types.js';
import { draDriverView } from '../views.js';
import type { DraClaimsResponse, DraDriverListResponse } from '../wire-types.js';

function service(dra: DraDriverService | undefined): DraDriverService {
  if (dra === undefined) throw new BerthError('BERTH_NOT_FOUND', 'this daemon runs no DRA handler');
  return dra;
}

/** `{claims:[{namespace,uid,name}]}`; the handler checks each claim (and the count bound). */
function claimsOf(request: FastifyRequest): ClaimRef[] {
  const body = request.body as { claims?: unknown } | null | undefined;
  if (typeof body !== 'object' || body === null || !Array.isArray(body.claims)) {
    throw new BerthError('BERTH_BAD_REQUEST', 'expected a JSON body {"claims":[{"namespace","uid","name"}]}');
  }
  return body.claims as ClaimRef[];
}

/** Aborted when the client goes away before its answer was sent, cancelling the plugin call. */
function replySignal(reply: FastifyReply): AbortSignal {
  const abort = new AbortController();
  reply.raw.once('close', () => {
    if (!reply.raw.writableFinished) abort.abort(new BerthError('BERTH_ABORTED', 'the API client went away'));
  });
  return abort.signal;
}

/**
 * GET /v1/dra/drivers: instances, connection state and the chosen service per
 * DRA driver. POST /v1/dra/drivers/{name}/prepare and /unprepare with
 * `{claims:[{namespace,uid,name}]}` call NodePrepareResources /
 * NodeUnprepareResources on the chosen instance and answer per claim; a
 * claim the plugin left out of its answer is reported as failed. A gRPC
 * failure of the call itself is a 502.
 */
export function draRoutes(app: FastifyInstance, dra: DraDriverService | undefined): void {
  app.get(
    '/v1/dra/drivers',
    async (): Promise<DraDriverListResponse> => ({ drivers: service(dra).drivers().map(draDriverView) }),
  );

  for (const action of ['prepare', 'unprepare'] as const) {
    app.post(`/v1/dra/drivers/:name/${action}`, async (request, reply): Promise<DraClaimsResponse> => {
      const { name } = request.params as { name: string };
      const claims = claimsOf(request);
      const handler = service(dra);
      return action === 'prepare'
        ? handler.prepare(name, claims, replySignal(reply))
        : handler.unprepare(name, claims, replySignal(reply));
    });
  }
}
