/**
 * The CSI volume calls (Controller and Node services, csi.v1) on one driver
 * endpoint, with plain-object arguments so callers never touch protobuf.
 * One connection per client (Nomad keeps one per plugin instance; the
 * kubelet dials per call): the volume manager opens one per operation and
 * closes it after. Every call has a deadline: the smaller of the per-call
 * timeout and what is left of the operation's own deadline. A gRPC failure
 * becomes a BerthError whose code says what the API should answer
 * (`csiCallError`), with the driver's message kept.
 */
import { create } from '@bufbuild/protobuf';
import { Client, credentials } from '@grpc/grpc-js';
import { BerthError, type BerthErrorCode } from '../../common/index.js';
import { callUnary, unixTarget } from '../../registration/index.js';
import { grpcErrorText } from '../grpc-error-text.js';
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
  VolumeCapability_AccessMode_Mode,
  VolumeCapabilitySchema,
  VolumeUsage_Unit,
} from './gen/csi/v1/csi_pb.js';

/** Access modes by their Nomad-style names (the CSI enum names, lowercase with dashes). */
export const CSI_ACCESS_MODES = {
  'single-node-writer': VolumeCapability_AccessMode_Mode.SINGLE_NODE_WRITER,
  'single-node-reader-only': VolumeCapability_AccessMode_Mode.SINGLE_NODE_READER_ONLY,
  'multi-node-reader-only': VolumeCapability_AccessMode_Mode.MULTI_NODE_READER_ONLY,
  'multi-node-single-writer': VolumeCapability_AccessMode_Mode.MULTI_NODE_SINGLE_WRITER,
  'multi-node-multi-writer': VolumeCapability_AccessMode_Mode.MULTI_NODE_MULTI_WRITER,
  'single-node-single-writer': VolumeCapability_AccessMode_Mode.SINGLE_NODE_SINGLE_WRITER,
  'single-node-multi-writer': VolumeCapability_AccessMode_Mode.SINGLE_NODE_MULTI_WRITER,
} as const;

export type CsiAccessMode = keyof typeof CSI_ACCESS_MODES;

/** A mount-type volume capability (berth does not publish raw block volumes). */
export interface CsiMountCapability {
  accessMode: CsiAccessMode;
  fsType: string;
  mountFlags: readonly string[];
}

export interface CsiCreatedVolume {
  volumeId: string;
  capacityBytes: number;
  volumeContext: Record<string, string>;
  accessibleTopology: Array<Record<string, string>>;
}

export interface CsiVolumeUsage {
  unit: 'BYTES' | 'INODES' | 'UNKNOWN';
  total: number;
  used: number;
  available: number;
}

export interface CsiVolumeStats {
  usage: CsiVolumeUsage[];
  /** VOLUME_CONDITION, when the driver sends one. */
  condition: { abnormal: boolean; message: string } | null;
}

export interface CsiVolumeClientOptions {
  /** Upper bound of one call (ms). */
  callTimeoutMs: number;
  /** The operation's deadline (epoch ms); no call runs past it. */
  deadline: number;
  signal?: AbortSignal;
  now?: () => number;
  /**
   * Where the Controller calls go when the driver's controller is a plugin of
   * its own (a `csi-controller` registration); default: the endpoint itself.
   */
  controllerEndpoint?: string;
}

/** gRPC status codes (numbers as on the wire). */
const Code = {
  DEADLINE_EXCEEDED: 4,
  NOT_FOUND: 5,
  ALREADY_EXISTS: 6,
  RESOURCE_EXHAUSTED: 8,
  FAILED_PRECONDITION: 9,
  ABORTED: 10,
  OUT_OF_RANGE: 11,
  UNIMPLEMENTED: 12,
  UNAVAILABLE: 14,
  INVALID_ARGUMENT: 3,
} as const;

/** How long a client is told to wait after a 503 from a driver that is away or busy. */
export const CSI_RETRY_AFTER_SECONDS = 5;

/** The gRPC status code of a failed call, if it is a gRPC status. */
export function grpcCodeOf(err: unknown): number | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'number' ? code : undefined;
}

/** A failed CSI call as a BerthError: the code maps to the HTTP answer, the driver's text is kept. */
export function csiCallError(driver: string, method: string, err: unknown): BerthError {
  const grpcCode = grpcCodeOf(err);
  let code: BerthErrorCode = 'BERTH_CSI_DRIVER_FAILED';
  switch (grpcCode) {
    case Code.NOT_FOUND:
      code = 'BERTH_CSI_VOLUME_NOT_FOUND';
      break;
    case Code.ALREADY_EXISTS:
    case Code.FAILED_PRECONDITION:
      code = 'BERTH_CSI_CONFLICT';
      break;
    case Code.RESOURCE_EXHAUSTED:
      code = 'BERTH_CSI_RESOURCE_EXHAUSTED';
      break;
    case Code.UNAVAILABLE:
    case Code.DEADLINE_EXCEEDED:
    case Code.ABORTED:
      code = 'BERTH_CSI_DRIVER_UNAVAILABLE';
      break;
    case Code.INVALID_ARGUMENT:
    case Code.OUT_OF_RANGE:
      code = 'BERTH_CSI_INVALID_ARGUMENT';
      break;
    case Code.UNIMPLEMENTED:
      code = 'BERTH_CSI_CAPABILITY_MISSING';
      break;
  }
  return new BerthError(code, `CSI ${method} on driver ${driver} failed: ${grpcErrorText(err)}`, {
    cause: err,
    details: {
      driver,
      method,
      ...(grpcCode === undefined ? {} : { grpcCode }),
      ...(code === 'BERTH_CSI_DRIVER_UNAVAILABLE' ? { retryAfterSeconds: CSI_RETRY_AFTER_SECONDS } : {}),
    },
  });
}

/** True when a failed call's outcome is unknown (the spec's transport codes, or not a gRPC status). */
export function isUncertainCsiFailure(err: unknown): boolean {
  const cause = (err as { cause?: unknown } | null)?.cause ?? err;
  const code = grpcCodeOf(cause);
  return (
    code === undefined ||
    code === 1 ||
    code === Code.DEADLINE_EXCEEDED ||
    code === Code.UNAVAILABLE ||
    code === Code.RESOURCE_EXHAUSTED ||
    code === Code.ABORTED
  );
}

function capability(spec: CsiMountCapability): VolumeCapability {
  return create(VolumeCapabilitySchema, {
    accessType: { case: 'mount', value: { fsType: spec.fsType, mountFlags: [...spec.mountFlags] } },
    accessMode: { mode: CSI_ACCESS_MODES[spec.accessMode] },
  });
}

/** The Controller service's methods: sent to the controller endpoint when it is apart. */
const CONTROLLER_METHODS: ReadonlySet<unknown> = new Set(Object.values(csiControllerMethods));

export class CsiVolumeClient {
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
      if (grpcCodeOf((err as { cause?: unknown }).cause) === Code.UNIMPLEMENTED) return [];
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

  async createVolume(request: {
    name: string;
    capacityBytes: number | undefined;
    parameters: Record<string, string>;
    capability: CsiMountCapability;
  }): Promise<CsiCreatedVolume> {
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

  async controllerPublish(request: {
    volumeId: string;
    nodeId: string;
    capability: CsiMountCapability;
    readOnly: boolean;
    volumeContext: Record<string, string>;
  }): Promise<Record<string, string>> {
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

  async nodeStage(request: {
    volumeId: string;
    publishContext: Record<string, string>;
    stagingPath: string;
    capability: CsiMountCapability;
    volumeContext: Record<string, string>;
  }): Promise<void> {
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

  async nodePublish(request: {
    volumeId: string;
    publishContext: Record<string, string>;
    /** Empty when the driver does not stage (the spec forbids sending one then). */
    stagingPath: string;
    targetPath: string;
    capability: CsiMountCapability;
    readOnly: boolean;
    volumeContext: Record<string, string>;
  }): Promise<void> {
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

export function openCsiVolumeClient(
  driver: string,
  endpoint: string,
  options: CsiVolumeClientOptions,
): CsiVolumeClient {
  return new CsiVolumeClient(driver, endpoint, options);
}
