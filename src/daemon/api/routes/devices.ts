import type { FastifyInstance } from 'fastify';
import { BerthError } from '../../../common/index.js';
import type { AllocationView, ResourceView } from '../../../handlers/device-plugin/index.js';
import type { DeviceInventory } from '../api-types.js';
import { queryString } from '../query-string.js';
import { isoTime } from '../views.js';

const ALLOCATIONS = 'allocations';

function allocationJson(a: AllocationView) {
  return { ...a, allocatedAt: isoTime(a.allocatedAt) };
}

function resourceJson(r: ResourceView) {
  return {
    ...r,
    connectedAt: isoTime(r.connectedAt),
    disconnectedAt: isoTime(r.disconnectedAt),
    removeAt: isoTime(r.removeAt),
    allocations: r.allocations.map(allocationJson),
  };
}

type Target =
  | { kind: 'resource'; resource: string }
  | { kind: 'allocations'; resource: string }
  | { kind: 'allocation'; resource: string; workload: string };

/**
 * Resource names contain a slash ("vendor.com/gpu"), so the routes take the
 * rest of the path and split it from the end: `{resource}`,
 * `{resource}/allocations`, `{resource}/allocations/{workload}`. The slash in
 * the resource may be sent as is or percent-encoded (%2F); `?resource=` in
 * place of the path segment works too (`/v1/devices/allocations?resource=R`).
 */
function parseTarget(rest: string, query: unknown): Target | undefined {
  const fromQuery = queryString(query, 'resource');
  const parts = rest.split('/').filter((p) => p !== '');
  if (fromQuery !== undefined) {
    if (parts.length === 1 && parts[0] === ALLOCATIONS) return { kind: 'allocations', resource: fromQuery };
    if (parts.length === 2 && parts[0] === ALLOCATIONS) {
      return { kind: 'allocation', resource: fromQuery, workload: parts[1] ?? '' };
    }
    if (parts.length === 0) return { kind: 'resource', resource: fromQuery };
    return undefined;
  }
  const n = parts.length;
  if (n >= 3 && parts[n - 2] === ALLOCATIONS) {
    return { kind: 'allocation', resource: parts.slice(0, n - 2).join('/'), workload: parts[n - 1] ?? '' };
  }
  if (n >= 2 && parts[n - 1] === ALLOCATIONS)
    return { kind: 'allocations', resource: parts.slice(0, n - 1).join('/') };
  if (n >= 1) return { kind: 'resource', resource: parts.join('/') };
  return undefined;
}

function noRoute(method: string, rest: string): BerthError {
  return new BerthError(
    'BERTH_NOT_FOUND',
    `no route ${method} /v1/devices/${rest}; use /v1/devices/{resource}/allocations[/{workload}]`,
  );
}

/**
 * GET /v1/devices (the inventory), GET /v1/devices/{resource},
 * POST /v1/devices/{resource}/allocations {workload, count | deviceIds},
 * GET and DELETE /v1/devices/{resource}/allocations/{workload}.
 */
export function deviceRoutes(app: FastifyInstance, devices: DeviceInventory): void {
  app.get('/v1/devices', async () => ({ resources: devices.list().map(resourceJson) }));

  app.get('/v1/devices/*', async (request) => {
    const rest = (request.params as { '*': string })['*'];
    const target = parseTarget(rest, request.query);
    if (target === undefined) throw noRoute('GET', rest);
    const resource = devices.get(target.resource);
    const missing = () =>
      new BerthError(
        'BERTH_NOT_FOUND',
        `device resource ${target.resource} is not known; list resources with GET /v1/devices`,
      );
    if (target.kind === 'resource') {
      if (resource === undefined) throw missing();
      return { resource: resourceJson(resource) };
    }
    if (target.kind === 'allocations')
      return { allocations: (resource?.allocations ?? []).map(allocationJson) };
    const allocation = resource?.allocations.find((a) => a.workload === target.workload);
    if (allocation === undefined) {
      throw new BerthError(
        'BERTH_ALLOCATION_NOT_FOUND',
        `workload ${target.workload} holds no allocation of ${target.resource}; list allocations with GET /v1/devices`,
      );
    }
    return { allocation: allocationJson(allocation) };
  });

  app.post('/v1/devices/*', async (request, reply) => {
    const rest = (request.params as { '*': string })['*'];
    const target = parseTarget(rest, request.query);
    if (target?.kind !== 'allocations') throw noRoute('POST', rest);
    const body = request.body;
    if (typeof body !== 'object' || body === null || Array.isArray(body)) {
      throw new BerthError(
        'BERTH_BAD_REQUEST',
        'expected a JSON object {"workload": "...", "count": N} or {"workload": "...", "deviceIds": [...]}',
      );
    }
    const allocation = await devices.allocate(target.resource, body as never);
    return reply.code(201).send({ allocation: allocationJson(allocation) });
  });

  app.delete('/v1/devices/*', async (request) => {
    const rest = (request.params as { '*': string })['*'];
    const target = parseTarget(rest, request.query);
    if (target?.kind !== 'allocation') throw noRoute('DELETE', rest);
    return { allocation: allocationJson(await devices.release(target.resource, target.workload)) };
  });
}
