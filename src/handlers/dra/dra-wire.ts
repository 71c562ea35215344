/**
 * grpc-js definitions of the DRAPlugin service in both API versions berth
 * speaks. The messages have the same shape (and field numbers) in v1 and
 * v1beta1; only the package, and so the method path, differs. Each version
 * builds its requests with its own schemas.
 */
import { create } from '@bufbuild/protobuf';
import type { MethodDefinition, ServiceDefinition } from '@grpc/grpc-js';
import { unaryMethod } from '../../registration/index.js';
import type { DraService } from './dra-services.js';
import * as v1 from './gen/dra/v1/api_pb.js';
import * as v1beta1 from './gen/dra/v1beta1/api_pb.js';

/** A claim as both versions carry it. */
export interface ClaimRef {
  namespace: string;
  uid: string;
  name: string;
}

/** The response shapes both versions share. */
export interface PrepareResponse {
  claims: {
    [uid: string]: {
      devices: Array<{
        requestNames: string[];
        poolName: string;
        deviceName: string;
        cdiDeviceIds: string[];
      }>;
      error: string;
    };
  };
}
export interface UnprepareResponse {
  claims: { [uid: string]: { error: string } };
}

export interface DraApi {
  /** Request → wire for this version. */
  prepare: MethodDefinition<unknown, PrepareResponse>;
  unprepare: MethodDefinition<unknown, UnprepareResponse>;
  prepareRequest(claims: ClaimRef[]): unknown;
  unprepareRequest(claims: ClaimRef[]): unknown;
  /** Response builders for serving (tests, example drivers). */
  prepareResponse(init: PrepareResponse): unknown;
  unprepareResponse(init: UnprepareResponse): unknown;
  /** For serving (tests, example drivers): the service definition. */
  service: ServiceDefinition;
}

function api(pkg: typeof v1 | typeof v1beta1): DraApi {
  const prepare = unaryMethod(
    pkg.DRAPlugin.method.nodePrepareResources,
    pkg.NodePrepareResourcesRequestSchema as typeof v1.NodePrepareResourcesRequestSchema,
    pkg.NodePrepareResourcesResponseSchema as typeof v1.NodePrepareResourcesResponseSchema,
  );
  const unprepare = unaryMethod(
    pkg.DRAPlugin.method.nodeUnprepareResources,
    pkg.NodeUnprepareResourcesRequestSchema as typeof v1.NodeUnprepareResourcesRequestSchema,
    pkg.NodeUnprepareResourcesResponseSchema as typeof v1.NodeUnprepareResourcesResponseSchema,
  );
  return {
    prepare: prepare as unknown as MethodDefinition<unknown, PrepareResponse>,
    unprepare: unprepare as unknown as MethodDefinition<unknown, UnprepareResponse>,
    prepareRequest: (claims) =>
      create(pkg.NodePrepareResourcesRequestSchema as typeof v1.NodePrepareResourcesRequestSchema, {
        claims: claims.map((c) => create(pkg.ClaimSchema as typeof v1.ClaimSchema, c)),
      }),
    unprepareRequest: (claims) =>
      create(pkg.NodeUnprepareResourcesRequestSchema as typeof v1.NodeUnprepareResourcesRequestSchema, {
        claims: claims.map((c) => create(pkg.ClaimSchema as typeof v1.ClaimSchema, c)),
      }),
    prepareResponse: (init) =>
      create(pkg.NodePrepareResourcesResponseSchema as typeof v1.NodePrepareResourcesResponseSchema, {
        claims: Object.fromEntries(
          Object.entries(init.claims).map(([uid, r]) => [
            uid,
            create(pkg.NodePrepareResourceResponseSchema as typeof v1.NodePrepareResourceResponseSchema, {
              error: r.error,
              devices: r.devices.map((d) => create(pkg.DeviceSchema as typeof v1.DeviceSchema, d)),
            }),
          ]),
        ),
      }),
    unprepareResponse: (init) =>
      create(pkg.NodeUnprepareResourcesResponseSchema as typeof v1.NodeUnprepareResourcesResponseSchema, {
        claims: Object.fromEntries(
          Object.entries(init.claims).map(([uid, r]) => [
            uid,
            create(
              pkg.NodeUnprepareResourceResponseSchema as typeof v1.NodeUnprepareResourceResponseSchema,
              r,
            ),
          ]),
        ),
      }),
    service: { NodePrepareResources: prepare, NodeUnprepareResources: unprepare } as ServiceDefinition,
  };
}

/** Per registered service name ("v1.DRAPlugin" → /k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin/...). */
export const draApis: Record<DraService, DraApi> = {
  'v1.DRAPlugin': api(v1),
  'v1beta1.DRAPlugin': api(v1beta1),
};
