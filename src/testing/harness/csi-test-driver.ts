/**
 * A CSI driver's Identity and Node services (the subset berth calls) on a
 * unix socket, answering what the test sets in `behaviour` (changeable while
 * it runs) and counting calls.
 */
import { create } from '@bufbuild/protobuf';
import { status as grpcStatus, type sendUnaryData } from '@grpc/grpc-js';
import {
  csiIdentityService,
  csiNodeService,
  GetPluginInfoResponseSchema,
  NodeGetCapabilitiesResponseSchema,
  NodeGetInfoResponseSchema,
  NodeServiceCapability_RPC_Type,
  ProbeResponseSchema,
  TopologySchema,
} from '../../handlers/csi/csi-wire.js';
import { type GrpcTestServer, grpcServiceError, startGrpcTestServer } from './grpc-test-server.js';

export interface CsiTestDriverBehaviour {
  name: string;
  vendorVersion?: string;
  nodeId: string;
  maxVolumesPerNode?: number;
  /** Omitted: no accessible_topology in the answer. */
  topology?: Record<string, string>;
  /** Capability names (STAGE_UNSTAGE_VOLUME, ...). */
  capabilities?: string[];
  /** Omitted: Probe answers without `ready` (which means ready). */
  ready?: boolean;
  /** NodeGetInfo fails with UNAVAILABLE and this text. */
  failNodeGetInfo?: string;
  /** NodeGetInfo never answers (the caller's deadline or cancel ends it). */
  hangNodeGetInfo?: boolean;
  /** GetPluginInfo fails with UNIMPLEMENTED. */
  failGetPluginInfo?: boolean;
}

export interface CsiTestDriver extends GrpcTestServer {
  behaviour: CsiTestDriverBehaviour;
  readonly calls: string[];
}

export async function startCsiTestDriver(
  socketPath: string,
  behaviour: CsiTestDriverBehaviour,
): Promise<CsiTestDriver> {
  const calls: string[] = [];
  const driver = { behaviour, calls } as { behaviour: CsiTestDriverBehaviour; calls: string[] };
  const server = await startGrpcTestServer(socketPath, [
    [
      csiIdentityService,
      {
        getPluginInfo: (_call: unknown, done: sendUnaryData<unknown>) => {
          calls.push('GetPluginInfo');
          const b = driver.behaviour;
          if (b.failGetPluginInfo) {
            done(grpcServiceError(grpcStatus.UNIMPLEMENTED, 'GetPluginInfo is not implemented'));
            return;
          }
          done(
            null,
            create(GetPluginInfoResponseSchema, { name: b.name, vendorVersion: b.vendorVersion ?? '' }),
          );
        },
        probe: (_call: unknown, done: sendUnaryData<unknown>) => {
          calls.push('Probe');
          const ready = driver.behaviour.ready;
          done(null, create(ProbeResponseSchema, ready === undefined ? {} : { ready }));
        },
      },
    ],
    [
      csiNodeService,
      {
        nodeGetCapabilities: (_call: unknown, done: sendUnaryData<unknown>) => {
          calls.push('NodeGetCapabilities');
          const names = driver.behaviour.capabilities ?? [];
          done(
            null,
            create(NodeGetCapabilitiesResponseSchema, {
              capabilities: names.map((name) => ({
                type: {
                  case: 'rpc' as const,
                  value: {
                    type: NodeServiceCapability_RPC_Type[name as keyof typeof NodeServiceCapability_RPC_Type],
                  },
                },
              })),
            }),
          );
        },
        nodeGetInfo: (_call: unknown, done: sendUnaryData<unknown>) => {
          calls.push('NodeGetInfo');
          const b = driver.behaviour;
          if (b.hangNodeGetInfo) return;
          if (b.failNodeGetInfo !== undefined) {
            done(grpcServiceError(grpcStatus.UNAVAILABLE, b.failNodeGetInfo));
            return;
          }
          done(
            null,
            create(NodeGetInfoResponseSchema, {
              nodeId: b.nodeId,
              maxVolumesPerNode: BigInt(b.maxVolumesPerNode ?? 0),
              ...(b.topology === undefined
                ? {}
                : { accessibleTopology: create(TopologySchema, { segments: b.topology }) }),
            }),
          );
        },
      },
    ],
  ]);
  return Object.assign(driver, {
    socketPath: server.socketPath,
    stop: server.stop,
    [Symbol.asyncDispose]: server.stop,
  });
}
