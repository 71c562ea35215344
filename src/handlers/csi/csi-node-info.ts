/**
 * What berth asks a CSI driver right after it registers, on one connection
 * that is closed afterwards (the kubelet also dials per call), all at once: who it is
 * (GetPluginInfo), whether it is ready (Probe), what its node service can do
 * (NodeGetCapabilities) and the node facts CSINode holds (NodeGetInfo). Only a
 * NodeGetInfo failure is fatal, as in the kubelet, which calls nothing else.
 */

import { create } from '@bufbuild/protobuf';
import { Client, credentials } from '@grpc/grpc-js';
import { callUnary, PLUGIN_INFO_LIMITS, unixTarget } from '../../registration/index.js';
import { grpcErrorText } from '../grpc-error-text.js';
import { csiIdentityMethods, csiNodeMethods } from './csi-wire.js';
import {
  GetPluginInfoRequestSchema,
  NodeGetCapabilitiesRequestSchema,
  NodeGetInfoRequestSchema,
  NodeServiceCapability_RPC_Type,
  ProbeRequestSchema,
} from './gen/csi/v1/csi_pb.js';

const MAX_INT32 = 2 ** 31 - 1;

/** The node facts of one driver, as CSINode keeps them plus what Identity says. */
export interface CsiNodeInfo {
  nodeId: string;
  /** CSINode `allocatable.count`: set only when the driver reports more than 0, capped at MaxInt32. */
  maxVolumesPerNode: number | null;
  /** `accessible_topology.segments`; null when the driver sent no topology. */
  accessibleTopology: Record<string, string> | null;
  /** From GetPluginInfo; null when that call failed. */
  pluginName: string | null;
  vendorVersion: string | null;
  /** From Probe: true/false, or null when the probe failed. Absent `ready` means ready. */
  ready: boolean | null;
  /** Node service RPC capabilities by name (STAGE_UNSTAGE_VOLUME, ...); null when the call failed. */
  capabilities: string[] | null;
  /** Non-fatal failures of the other calls, for the log and the API. */
  warnings: string[];
}

export class NodeGetInfoError extends Error {}

export interface QueryOptions {
  /** Deadline (epoch ms) shared by all four calls. */
  deadline: number;
  signal?: AbortSignal;
}

/** Runs the four calls concurrently on one connection; throws NodeGetInfoError when NodeGetInfo fails. */
export async function queryCsiDriver(endpoint: string, options: QueryOptions): Promise<CsiNodeInfo> {
  // No reply can be larger than everything berth records about a plugin (a 3.9 MB topology was stored once).
  const client = new Client(unixTarget(endpoint), credentials.createInsecure(), {
    'grpc.max_receive_message_length': PLUGIN_INFO_LIMITS.recordedBytes,
  });
  const remaining = () => Math.max(1, options.deadline - Date.now());
  const failures = new Map<string, string>();
  const attempt = async <T>(what: string, run: () => Promise<T>): Promise<T | undefined> => {
    try {
      return await run();
    } catch (err) {
      failures.set(what, grpcErrorText(err));
      return undefined;
    }
  };
  try {
    // One connection, four calls at once (HTTP/2 multiplexes them), one shared deadline.
    const [identity, probe, caps, info] = await Promise.all([
      attempt('GetPluginInfo', () =>
        callUnary(
          client,
          csiIdentityMethods.getPluginInfo,
          create(GetPluginInfoRequestSchema),
          remaining(),
          options.signal,
          'CSI GetPluginInfo',
        ),
      ),
      attempt('Probe', () =>
        callUnary(
          client,
          csiIdentityMethods.probe,
          create(ProbeRequestSchema),
          remaining(),
          options.signal,
          'CSI Probe',
        ),
      ),
      attempt('NodeGetCapabilities', () =>
        callUnary(
          client,
          csiNodeMethods.nodeGetCapabilities,
          create(NodeGetCapabilitiesRequestSchema),
          remaining(),
          options.signal,
          'CSI NodeGetCapabilities',
        ),
      ),
      attempt('NodeGetInfo', () => callNodeGetInfo(client, remaining(), options.signal)),
    ]);
    if (info === undefined) {
      const failure = failures.get('NodeGetInfo') ?? 'NodeGetInfo failed';
      const oversized = /Received message larger than max \((\d+) vs\.? ?(\d+)\)/.exec(failure);
      throw new NodeGetInfoError(
        oversized === null
          ? failure
          : `the reply is ${oversized[1]} bytes, more than the budget of ${oversized[2]} bytes berth records per plugin (${failure})`,
      );
    }
    // In a fixed order, whatever order the calls finished in.
    const warnings = ['GetPluginInfo', 'Probe', 'NodeGetCapabilities'].flatMap((what) => {
      const failure = failures.get(what);
      return failure === undefined ? [] : [`${what}: ${failure}`];
    });
    const max = info.maxVolumesPerNode;
    return {
      nodeId: info.nodeId,
      maxVolumesPerNode: max > 0n ? Number(max > BigInt(MAX_INT32) ? BigInt(MAX_INT32) : max) : null,
      accessibleTopology:
        info.accessibleTopology === undefined ? null : { ...info.accessibleTopology.segments },
      pluginName: identity?.name ?? null,
      vendorVersion: identity?.vendorVersion ?? null,
      // A BoolValue that is absent means ready.
      ready: probe === undefined ? null : (probe.ready ?? true),
      capabilities:
        caps === undefined
          ? null
          : caps.capabilities.flatMap((c) =>
              c.type.case === 'rpc' ? [capabilityName(c.type.value.type)] : [],
            ),
      warnings,
    };
  } finally {
    client.close();
  }
}

function callNodeGetInfo(client: Client, timeoutMs: number, signal: AbortSignal | undefined) {
  return callUnary(
    client,
    csiNodeMethods.nodeGetInfo,
    create(NodeGetInfoRequestSchema),
    timeoutMs,
    signal,
    'CSI NodeGetInfo',
  );
}

function capabilityName(type: NodeServiceCapability_RPC_Type): string {
  return NodeServiceCapability_RPC_Type[type] ?? `UNKNOWN_${String(type)}`;
}
