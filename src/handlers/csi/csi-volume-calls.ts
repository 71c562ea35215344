/**
 * The CSI volume client itself (csi-volume-contract.ts has its contract,
 * csi-volume-client.ts opens it): one connection per client (Nomad keeps one per plugin instance;
 * the kubelet dials per call): the volume manager opens one per operation
 * and closes it after. Every call has a deadline: the smaller of the
 * per-call timeout and what is left of the operation's own deadline. A gRPC
 * failure becomes a BerthError (`csiCallError`). Loaded on the first volume
 * operation: it brings grpc-js and the generated csi.v1 messages.
 */
import { create } from '@bufbuild/protobuf';
import { Client, credentials, status } from '@grpc/grpc-js';
import { BerthError } from '../../common/index.js';
import { callUnary, unixTarget } from '../../registration/index.js';
import {
  CSI_ACCESS_MODES,
  CSI_RETRY_AFTER_SECONDS,
  type CsiControllerPublishCall,
  type CsiCreatedVolume,
  type CsiCreateVolumeCall,
  type CsiMountCapability,
  type CsiNodePublishCall,
  type CsiNodeStageCall,
  type CsiVolumeClient,
  type CsiVolumeClientOptions,
  type CsiVolumeStats,
  csiCallError,
  grpcCodeOf,
} from './csi-volume-contract.js';
import { csiControllerMethods, csiNodeMethods, csiNodeVolumeMethods } from './csi-wire.js';
import {
  ControllerGetCapabilitiesRequestSchema,
  ControllerPublishVolumeRequestSchema,
  ControllerServiceCapability_RPC_Type,
  ControllerUnpublishVolumeRequestSchema,
  CreateVolumeRequestSchema,
  DeleteVolumeRequestSchema,
  NodeGetCapabilitiesRequestSchema,
  NodeGetVolumeStatsRequestSchema,
  NodePublishVolumeRequestSchema,
  NodeServiceCapability_RPC_Type,
  NodeStageVolumeRequestSchema,
  NodeUnpublishVolumeRequestSchema,
  NodeUnstageVolumeRequestSchema,
  type VolumeCapability,
  VolumeCapabilitySchema,
  VolumeUsage_Unit,
} from './gen/csi/v1/csi_pb.js';

function capability(spec: CsiMountCapability): VolumeCapability {
  return create(VolumeCapabilitySchema, {
    accessType: { case: 'mount', value: { fsType: spec.fsType, mountFlags: [...spec.mountFlags] } },
    accessMode: { mode: CSI_ACCESS_MODES[spec.accessMode] },
  });
}

/** The Controller service's methods: sent to the controller endpoint when it is apart. */
const CONTROLLER_METHODS: ReadonlySet<unknown> = new Set(Object.values(csiControllerMethods));

export class GrpcCsiVolumeClient implements CsiVolumeClient {
  readonly #client: Client;
  /** The same client as #client unless the controller is a plugin of its own. */
  readonly #controller: Client;
  readonly #driver: string;
  readonly #options: CsiVolumeClientOptions;
  readonly #now: () => number;

  constructor(driver: string, endpoint: string, options: CsiVolumeClientOptions) {
    this.#driver = driver;
    this.#options = options;
    this.#now = options.now ?? Date.now;
    this.#client = new Client(unixTarget(endpoint), credentials.createInsecure());
    const apart = options.controllerEndpoint !== undefined && options.controllerEndpoint !== endpoint;
    this.#controller = apart
      ? new Client(unixTarget(options.controllerEndpoint as string), credentials.createInsecure())
      : this.#client;
  }

  close(): void {
    this.#client.close();
    if (this.#controller !== this.#client) this.#controller.close();
  }

  async #call<Req, Res>(
    method: Parameters<typeof callUnary<Req, Res>>[1],
    request: Req,
    name: string,
  ): Promise<Res> {
    const left = this.#options.deadline - this.#now();
    if (left <= 0) {
      throw new BerthError(
        'BERTH_CSI_DRIVER_UNAVAILABLE',
        `CSI ${name} on driver ${this.#driver} not sent: the operation's deadline passed`,
        { details: { driver: this.#driver, method: name, retryAfterSeconds: CSI_RETRY_AFTER_SECONDS } },
      );
    }
    try {
      return await callUnary(
        CONTROLLER_METHODS.has(method) ? this.#controller : this.#client,
        method,
        request,
        Math.min(this.#options.callTimeoutMs, left),
        this.#options.signal,
        `CSI ${name}`,
      );
    } catch (err) {
      if (err instanceof BerthError) throw err; // aborted
      throw csiCallError(this.#driver, name, err);
    }
  }

  /** Controller RPC capabilities by name; none when the driver serves no Controller service. */
  async controllerCapabilities(): Promise<string[]> {
    try {
      const res = await this.#call(
        csiControllerMethods.controllerGetCapabilities,
        create(ControllerGetCapabilitiesRequestSchema),
        'ControllerGetCapabilities',
      );
      return res.capabilities.flatMap((c) =>
        c.type.case === 'rpc'
          ? [ControllerServiceCapability_RPC_Type[c.type.value.type] ?? `UNKNOWN_${c.type.value.type}`]
          : [],
      );
    } catch (err) {
      // A node-only driver has no Controller service: that is "no controller capabilities".
      if (grpcCodeOf((err as { cause?: unknown }).cause) === status.UNIMPLEMENTED) return [];
      throw err;
    }
  }

  async nodeCapabilities(): Promise<string[]> {
    const res = await this.#call(
      csiNodeMethods.nodeGetCapabilities,
      create(NodeGetCapabilitiesRequestSchema),
      'NodeGetCapabilities',
    );
    return res.capabilities.flatMap((c) =>
      c.type.case === 'rpc'
        ? [NodeServiceCapability_RPC_Type[c.type.value.type] ?? `UNKNOWN_${c.type.value.type}`]
        : [],
    );
  }

  async createVolume(request: CsiCreateVolumeCall): Promise<CsiCreatedVolume> {
    const res = await this.#call(
      csiControllerMethods.createVolume,
      create(CreateVolumeRequestSchema, {
        name: request.name,
        // Omitted when unset, as Nomad does when both bounds are 0.
        ...(request.capacityBytes === undefined
          ? {}
          : { capacityRange: { requiredBytes: BigInt(request.capacityBytes) } }),
        volumeCapabilities: [capability(request.capability)],
        parameters: request.parameters,
      }),
      'CreateVolume',
    );
    const volume = res.volume;
    if (volume === undefined || volume.volumeId === '') {
      throw new BerthError(
        'BERTH_CSI_DRIVER_FAILED',
        `CSI CreateVolume on driver ${this.#driver} answered without a volume id`,
      );
    }
    return {
      volumeId: volume.volumeId,
      capacityBytes: Number(volume.capacityBytes),
      volumeContext: { ...volume.volumeContext },
      accessibleTopology: volume.accessibleTopology.map((t) => ({ ...t.segments })),
    };
  }

  async deleteVolume(volumeId: string): Promise<void> {
    await this.#call(
      csiControllerMethods.deleteVolume,
      create(DeleteVolumeRequestSchema, { volumeId }),
      'DeleteVolume',
    );
  }

  async controllerPublish(request: CsiControllerPublishCall): Promise<Record<string, string>> {
    const res = await this.#call(
      csiControllerMethods.controllerPublishVolume,
      create(ControllerPublishVolumeRequestSchema, {
        volumeId: request.volumeId,
        nodeId: request.nodeId,
        volumeCapability: capability(request.capability),
        readonly: request.readOnly,
        volumeContext: request.volumeContext,
      }),
      'ControllerPublishVolume',
    );
    return { ...res.publishContext };
  }

  async controllerUnpublish(volumeId: string, nodeId: string): Promise<void> {
    await this.#call(
      csiControllerMethods.controllerUnpublishVolume,
      create(ControllerUnpublishVolumeRequestSchema, { volumeId, nodeId }),
      'ControllerUnpublishVolume',
    );
  }

  async nodeStage(request: CsiNodeStageCall): Promise<void> {
    await this.#call(
      csiNodeVolumeMethods.nodeStageVolume,
      create(NodeStageVolumeRequestSchema, {
        volumeId: request.volumeId,
        publishContext: request.publishContext,
        stagingTargetPath: request.stagingPath,
        volumeCapability: capability(request.capability),
        volumeContext: request.volumeContext,
      }),
      'NodeStageVolume',
    );
  }

  async nodeUnstage(volumeId: string, stagingPath: string): Promise<void> {
    await this.#call(
      csiNodeVolumeMethods.nodeUnstageVolume,
      create(NodeUnstageVolumeRequestSchema, { volumeId, stagingTargetPath: stagingPath }),
      'NodeUnstageVolume',
    );
  }

  async nodePublish(request: CsiNodePublishCall): Promise<void> {
    await this.#call(
      csiNodeVolumeMethods.nodePublishVolume,
      create(NodePublishVolumeRequestSchema, {
        volumeId: request.volumeId,
        publishContext: request.publishContext,
        stagingTargetPath: request.stagingPath,
        targetPath: request.targetPath,
        volumeCapability: capability(request.capability),
        readonly: request.readOnly,
        volumeContext: request.volumeContext,
      }),
      'NodePublishVolume',
    );
  }

  async nodeUnpublish(volumeId: string, targetPath: string): Promise<void> {
    await this.#call(
      csiNodeVolumeMethods.nodeUnpublishVolume,
      create(NodeUnpublishVolumeRequestSchema, { volumeId, targetPath }),
      'NodeUnpublishVolume',
    );
  }

  async nodeVolumeStats(volumeId: string, volumePath: string, stagingPath: string): Promise<CsiVolumeStats> {
    const res = await this.#call(
      csiNodeVolumeMethods.nodeGetVolumeStats,
      create(NodeGetVolumeStatsRequestSchema, { volumeId, volumePath, stagingTargetPath: stagingPath }),
      'NodeGetVolumeStats',
    );
    return {
      usage: res.usage.map((u) => ({
        unit:
          u.unit === VolumeUsage_Unit.BYTES
            ? 'BYTES'
            : u.unit === VolumeUsage_Unit.INODES
              ? 'INODES'
              : 'UNKNOWN',
        total: Number(u.total),
        used: Number(u.used),
        available: Number(u.available),
      })),
      condition:
        res.volumeCondition === undefined
          ? null
          : { abnormal: res.volumeCondition.abnormal, message: res.volumeCondition.message },
    };
  }
}
