import type {
  ClusterEvent,
  ClusterNode,
  ClusterPlugin,
  ClusterViewStatus,
  PluginFilter,
} from '../../cluster/index.js';
import type { PluginInstanceInfo } from '../../common/index.js';
import type { CsiDriverView } from '../../handlers/csi/index.js';
import type { AllocationRequest, AllocationView, ResourceView } from '../../handlers/device-plugin/index.js';
import type { ClaimRef, ClaimsResult, DraDriverView } from '../../handlers/dra/index.js';
import type { KubeObject, ObjectResource } from '../../objects/index.js';
import type { SocketStatus } from '../../plugin-manager/index.js';
import type { EventBus } from '../event-bus.js';
import type {
  ClusterSelfView,
  CsiCreatedVolumeView,
  CsiPublicationResult,
  CsiVolumeDeleteResponse,
  CsiVolumeView,
  PodSummary,
  PodVolume,
  ReadinessView,
  StatusView,
} from './wire-types.js';

/**
 * The narrow views of the daemon's components that the HTTP API reads. The
 * API depends on these, never on the components themselves, so its routes are
 * tested with small stand-ins.
 */

/** One socket as the plugin manager sees it. */
export type { SocketStatus };

/** The registry's read side. */
export interface PluginCatalog {
  types(): string[];
  /** Current instance per name; undefined for a type never registered. */
  listPlugins(type: string): PluginInstanceInfo[] | undefined;
  /** Every instance of one plugin, newest first. */
  listInstances(type: string, name: string): PluginInstanceInfo[];
}

/** A workload that references secrets and configmaps (a Kubernetes Pod, as JSON; the object manager's typed view is objects' `Pod`). */
export interface PodDocument {
  apiVersion?: string;
  kind?: string;
  metadata: { name: string; namespace: string; uid: string; [key: string]: unknown };
  spec?: unknown;
  [key: string]: unknown;
}

export type { PodSummary, PodVolume };

export interface PodRegistry {
  /** Registers (or updates) the pod with both object managers and publishes its CSI inline volumes. */
  apply(pod: PodDocument): Promise<PodSummary>;
  /** Unpublishes the stored pod's inline volumes and unregisters it; undefined when no pod has that namespace and name. */
  delete(namespace: string, name: string): Promise<PodSummary | undefined>;
  list(): PodSummary[];
}

export interface ObjectReader {
  get(resource: ObjectResource, namespace: string, name: string): Promise<KubeObject>;
}

export interface MetricsSource {
  contentType: string;
  render(): Promise<string>;
}

/** The device plugin manager's inventory and allocations (handlers/device-plugin). */
export interface DeviceInventory {
  list(): ResourceView[];
  get(resource: string): ResourceView | undefined;
  allocate(resource: string, request: AllocationRequest): Promise<AllocationView>;
  release(resource: string, workload: string): Promise<AllocationView>;
}

export interface ApiBackend {
  plugins: PluginCatalog;
  sockets(): SocketStatus[];
  events: EventBus;
  pods: PodRegistry;
  objects: ObjectReader;
  metrics: MetricsSource;
  /** Device plugin inventory and allocations; the /v1/devices routes exist only with it. */
  devices?: DeviceInventory;
  /** The /v1/status document. */
  status(): StatusView;
  /** Ready (state restored, first scan done, plugins directory and storage usable) and each check behind it. */
  readiness(): ReadinessView;
  /** The fleet view, when `cluster:` is configured. */
  cluster?: () => ClusterApi | undefined;
  /** The fleet view's changes with ids, for GET /v1/cluster/events (fed from ClusterApi.onEvent). */
  clusterEvents?: EventBus<ClusterEvent>;
  /** The CSI handler's drivers (GET /v1/csi/drivers); absent: the route answers 404. */
  csi?: CsiDriverCatalog;
  /** The CSI volumes API (/v1/csi/volumes...); absent: those routes answer 404. */
  csiVolumes?: CsiVolumeService;
  /** The DRA handler's drivers and claim calls (/v1/dra/drivers...). */
  dra?: DraDriverService;
}

/** The CSI handler's read side. */
export interface CsiDriverCatalog {
  drivers(): CsiDriverView[];
}

/** The CSI volume manager's side the API uses (volumes/ VolumeManager). Requests are checked there. */
export interface CsiVolumeService {
  create(request: Record<string, unknown> & { driver: string; name: string }): Promise<CsiCreatedVolumeView>;
  publish(
    driver: string,
    volumeId: string,
    request: Record<string, unknown> & { workload: string },
  ): Promise<CsiPublicationResult>;
  unpublish(driver: string, volumeId: string, workload: string): Promise<CsiPublicationResult>;
  delete(driver: string, volumeId: string): Promise<CsiVolumeDeleteResponse>;
  list(): Promise<CsiVolumeView[]>;
}

/** The DRA handler's side the API uses. */
export interface DraDriverService {
  drivers(): DraDriverView[];
  prepare(driver: string, claims: ClaimRef[], signal?: AbortSignal): Promise<ClaimsResult>;
  unprepare(driver: string, claims: ClaimRef[], signal?: AbortSignal): Promise<ClaimsResult>;
}

/** What the cluster routes read: the daemon's fleet view (absent when `cluster:` is not configured). */
export interface ClusterApi {
  nodes(): ClusterNode[];
  plugins(filter: PluginFilter): ClusterPlugin[];
  status(): ClusterViewStatus;
  /** This daemon's own publishing: node name, lease state, conflict. */
  writer(): ClusterSelfView;
  onEvent(listener: (event: ClusterEvent) => void): () => void;
}
