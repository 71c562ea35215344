/** Shapes of the CSI volumes API (requests in, views out) and what the volume manager needs from outside. */
import type { CsiAccessMode, CsiVolumeStats } from '../handlers/csi/index.js';

export type { CsiAccessMode, CsiVolumeStats };

/** POST /v1/csi/volumes */
export interface CreateVolumeRequest {
  driver: string;
  name: string;
  capacityBytes?: number;
  parameters?: Record<string, string>;
  accessMode?: CsiAccessMode;
  fsType?: string;
}

export interface CreatedVolumeView {
  driver: string;
  volumeId: string;
  capacityBytes: number;
  volumeContext: Record<string, string>;
  accessibleTopology: Array<Record<string, string>>;
}

/** POST /v1/csi/volumes/{driver}/{volumeId}/publications */
export interface PublishRequest {
  workload: string;
  readOnly?: boolean;
  accessMode?: CsiAccessMode;
  fsType?: string;
  mountFlags?: string[];
  volumeContext?: Record<string, string>;
}

/** The options a publication was made with; a second publish must match them exactly. */
export interface PublishOptions {
  readOnly: boolean;
  accessMode: CsiAccessMode;
  fsType: string;
  mountFlags: string[];
  volumeContext: Record<string, string>;
  /** A CSI ephemeral inline volume of a pod: NodePublish only, no controller publish, no stage. */
  ephemeral: boolean;
}

export interface PublishResult {
  driver: string;
  volumeId: string;
  workload: string;
  targetPath: string;
  /** Null when the driver does not stage (or for an ephemeral volume). */
  stagingPath: string | null;
}

/**
 * `published`: mounted at its target; `vanished`: recorded but the target is
 * no longer a mount point (publish again to repair, or unpublish to clean
 * up); `uncertain`: NodePublish was sent and its outcome is unknown (a
 * timeout, a crash): unpublish, or publish again.
 */
export type PublicationStatus = 'published' | 'vanished' | 'uncertain';

export interface PublicationView extends PublishOptions {
  workload: string;
  targetPath: string;
  status: PublicationStatus;
  mounted: boolean;
  publishedAt: number;
}

export interface VolumeView {
  driver: string;
  volumeId: string;
  /** The CreateVolume name, when berth created it. */
  name: string | null;
  capacityBytes: number | null;
  volumeContext: Record<string, string>;
  createdAt: number | null;
  /** Whether the driver is registered now (its volumes stay recorded while it is away). */
  driverRegistered: boolean;
  controllerPublished: boolean;
  staging: { path: string; mounted: boolean } | null;
  publications: PublicationView[];
  /** NodeGetVolumeStats, when the driver offers GET_VOLUME_STATS and the volume is published. */
  stats: CsiVolumeStats | null;
  statsError: string | null;
}

/** A registered CSI driver as the volume manager needs it (from the CSI handler). */
export interface CsiDriverEndpoint {
  /** The node plugin's endpoint (its CSIPlugin registration). */
  endpoint: string;
  nodeId: string;
  /** A controller plugin registered apart (`csi-controller`): Controller calls go there. */
  controllerEndpoint?: string;
}

export interface CsiDriverDirectory {
  /** The registered driver (node plugin) of that name, or undefined while none is. */
  lookup(name: string): CsiDriverEndpoint | undefined;
  /**
   * The endpoint of a controller plugin of that name registered apart
   * (`csi-controller`), or undefined: creating and deleting volumes need
   * only the controller, so they work while no node plugin is registered.
   */
  lookupController?(name: string): string | undefined;
}

/** One CSI volume of a pod (`spec.volumes[].csi`), published for the pod's uid. */
export interface PodVolumeView {
  name: string;
  driver: string;
  volumeId: string;
  targetPath: string;
  readOnly: boolean;
}
