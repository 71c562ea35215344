/**
 * The contract of the CSI volume calls (Controller and Node services,
 * csi.v1) on one driver endpoint, with plain-object arguments so callers
 * never touch protobuf: the client's interface, the access-mode names, and
 * the mapping of a failed call to a BerthError (`csiCallError`, the driver's
 * message kept). No gRPC here: csi-volume-client.ts opens a client, and the
 * client itself (csi-volume-calls.ts) is loaded with the first one.
 */
import { BerthError, type BerthErrorCode } from '../../common/index.js';
import { grpcErrorText } from '../grpc-error-text.js';
/**
 * Access modes by their Nomad-style names (the CSI enum names, lowercase with
 * dashes), each with its csi.v1 `VolumeCapability.AccessMode.Mode` number:
 * written out so this light module needs no generated code
 * (csi-volume-calls.test.ts checks them against csi.proto's enum).
 */
export const CSI_ACCESS_MODES = {
  'single-node-writer': 1, // SINGLE_NODE_WRITER
  'single-node-reader-only': 2, // SINGLE_NODE_READER_ONLY
  'multi-node-reader-only': 3, // MULTI_NODE_READER_ONLY
  'multi-node-single-writer': 4, // MULTI_NODE_SINGLE_WRITER
  'multi-node-multi-writer': 5, // MULTI_NODE_MULTI_WRITER
  'single-node-single-writer': 6, // SINGLE_NODE_SINGLE_WRITER
  'single-node-multi-writer': 7, // SINGLE_NODE_MULTI_WRITER
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

/** What a volume operation asks a driver to create (CreateVolume). */
export interface CsiCreateVolumeCall {
  name: string;
  capacityBytes: number | undefined;
  parameters: Record<string, string>;
  capability: CsiMountCapability;
}

/** ControllerPublishVolume's arguments. */
export interface CsiControllerPublishCall {
  volumeId: string;
  nodeId: string;
  capability: CsiMountCapability;
  readOnly: boolean;
  volumeContext: Record<string, string>;
}

/** NodeStageVolume's arguments. */
export interface CsiNodeStageCall {
  volumeId: string;
  publishContext: Record<string, string>;
  stagingPath: string;
  capability: CsiMountCapability;
  volumeContext: Record<string, string>;
}

/** NodePublishVolume's arguments. */
export interface CsiNodePublishCall {
  volumeId: string;
  publishContext: Record<string, string>;
  /** Empty when the driver does not stage (the spec forbids sending one then). */
  stagingPath: string;
  targetPath: string;
  capability: CsiMountCapability;
  readOnly: boolean;
  volumeContext: Record<string, string>;
}

/**
 * One driver's volume calls for one operation, on one connection (two when
 * the controller is a plugin of its own); close() when done. Made by
 * `openCsiVolumeClient`; the implementation is csi-volume-calls.ts.
 */
export interface CsiVolumeClient {
  close(): void;
  /** Controller RPC capabilities by name; none when the driver serves no Controller service. */
  controllerCapabilities(): Promise<string[]>;
  /** Node RPC capabilities by name. */
  nodeCapabilities(): Promise<string[]>;
  createVolume(request: CsiCreateVolumeCall): Promise<CsiCreatedVolume>;
  deleteVolume(volumeId: string): Promise<void>;
  /** Resolves to the publish context the driver returned. */
  controllerPublish(request: CsiControllerPublishCall): Promise<Record<string, string>>;
  controllerUnpublish(volumeId: string, nodeId: string): Promise<void>;
  nodeStage(request: CsiNodeStageCall): Promise<void>;
  nodeUnstage(volumeId: string, stagingPath: string): Promise<void>;
  nodePublish(request: CsiNodePublishCall): Promise<void>;
  nodeUnpublish(volumeId: string, targetPath: string): Promise<void>;
  nodeVolumeStats(volumeId: string, volumePath: string, stagingPath: string): Promise<CsiVolumeStats>;
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
