/**
 * The JSON shapes of the HTTP API, named once: the server's views produce
 * them and the CLI reads them (through the light `berth/daemon/contract`
 * entry). Times are ISO-8601 strings or null. Adding a field here is the
 * first step of changing an answer; both sides then fail to compile until
 * they agree.
 */
import type { BerthErrorCode, EventError } from '../../common/index.js';
import type { SocketState } from '../../plugin-manager/index.js';

/** Every error answer: `{"error":{"code":"BERTH_...","message":"..."}}`. */
export interface ErrorBody {
  error: { code: BerthErrorCode; message: string };
}

/** One registry instance (GET /v1/plugins..., and inside events). */
export interface PluginView {
  type: string;
  name: string;
  version: string;
  endpoint: string | null;
  versions: string[];
  socketPath: string;
  registeredAt: string | null;
  /**
   * How it came in: "plugins-dir" (a registration socket in the plugins
   * directory) or "kubelet.sock" (a device plugin's legacy Register, where
   * socketPath is the plugin's endpoint); null for an instance a library
   * user put in the registry directly.
   */
  source: string | null;
  options: Record<string, string>;
  /** True when berth only observed the plugin (observe mode): another registrar owns it, berth told it nothing. */
  observed: boolean;
}

/** The current instance of a plugin, with how many instances it has. */
export interface PluginSummaryView extends PluginView {
  instances: number;
}

/** GET /v1/plugins[?type=] */
export interface PluginListResponse {
  plugins: PluginSummaryView[];
}

/** GET /v1/plugins/{type}/{name}: the current instance and every instance, newest first. */
export interface PluginDetailResponse {
  plugin: PluginSummaryView;
  instances: PluginView[];
}

/** One plugin socket as the plugin manager sees it (GET /v1/sockets). */
export interface SocketView {
  socketPath: string;
  state: SocketState;
  plugin: { type: string; name: string } | null;
  endpoint: string | null;
  versions: string[];
  lastError: { code: string; message: string } | null;
  retryAt: string | null;
  attempts: number;
  registeredAt: string | null;
  /**
   * Observe mode, once the plugin answered GetInfo: the dry run of the
   * kubelet's validation. `accepted: false` carries the text the kubelet would
   * send the plugin. null: registrar mode, or the plugin has not answered.
   */
  verdict: { accepted: boolean; error: string | null } | null;
}

/** GET /v1/sockets */
export interface SocketListResponse {
  sockets: SocketView[];
}

/** One event on GET /v1/events (the `data:` line; `event:` repeats `type`). */
export type EventView =
  | { type: 'registered' | 'deregistered'; at: string | null; plugin: PluginView }
  | { type: 'updated'; at: string | null; plugin: PluginView; previous: PluginView }
  | {
      type: 'failed';
      at: string | null;
      socketPath: string;
      plugin: { type: string; name: string } | null;
      error: EventError;
      retryAt: string | null;
      attempts: number;
    }
  | { type: 'discovered' | 'socket-removed'; at: string | null; socketPath: string }
  | { type: 'lagged'; at: string | null; dropped: number }
  /** Every instance of a DRA driver has been unusable for the wipe delay. */
  | {
      type: 'driver-unusable';
      at: string | null;
      plugin: { type: string; name: string };
      since: string | null;
    }
  | { type: 'storage-error'; at: string | null; error: EventError; path?: string }
  /** A device plugin resource's inventory changed. */
  | {
      type: 'devices-changed';
      at: string | null;
      resource: string;
      reason: 'connected' | 'snapshot' | 'disconnected' | 'removed';
      endpoint: string | null;
      healthy: number;
      unhealthy: number;
      changed: string[];
    };

/** A registered pod and the objects it references (PUT/DELETE /v1/pods/{ns}/{name}, GET /v1/pods). */
export interface PodSummary {
  namespace: string;
  name: string;
  uid: string;
  secrets: string[];
  configMaps: string[];
  /** The pod's CSI ephemeral inline volumes, published for its uid. */
  podVolumes: PodVolume[];
}

/** One CSI inline volume of a pod (`spec.volumes[].csi`) and where it is mounted. */
export interface PodVolume {
  name: string;
  driver: string;
  volumeId: string;
  targetPath: string;
  readOnly: boolean;
}

/** POST /v1/csi/volumes */
export interface CsiCreatedVolumeView {
  driver: string;
  volumeId: string;
  capacityBytes: number;
  volumeContext: Record<string, string>;
  accessibleTopology: Array<Record<string, string>>;
}

/** POST .../publications and DELETE .../publications/{workload} */
export interface CsiPublicationResult {
  driver: string;
  volumeId: string;
  workload: string;
  targetPath: string;
  stagingPath: string | null;
}

/** One publication in GET /v1/csi/volumes. `status`: published, vanished (not mounted) or uncertain. */
export interface CsiPublicationView {
  workload: string;
  targetPath: string;
  status: 'published' | 'vanished' | 'uncertain';
  mounted: boolean;
  readOnly: boolean;
  accessMode: string;
  fsType: string;
  mountFlags: string[];
  volumeContext: Record<string, string>;
  ephemeral: boolean;
  publishedAt: number;
}

/** One volume in GET /v1/csi/volumes (times in epoch ms here, ISO text on the wire). */
export interface CsiVolumeView {
  driver: string;
  volumeId: string;
  name: string | null;
  capacityBytes: number | null;
  volumeContext: Record<string, string>;
  createdAt: number | null;
  driverRegistered: boolean;
  controllerPublished: boolean;
  staging: { path: string; mounted: boolean } | null;
  publications: CsiPublicationView[];
  stats: {
    usage: Array<{ unit: string; total: number; used: number; available: number }>;
    condition: { abnormal: boolean; message: string } | null;
  } | null;
  statsError: string | null;
}

/** GET /v1/csi/volumes (times as ISO text). */
export interface CsiVolumeListResponse {
  volumes: Array<
    Omit<CsiVolumeView, 'createdAt' | 'publications'> & {
      createdAt: string | null;
      publications: Array<Omit<CsiPublicationView, 'publishedAt'> & { publishedAt: string | null }>;
    }
  >;
}

/** PUT and DELETE /v1/pods/{namespace}/{name} */
export interface PodResponse {
  pod: PodSummary;
}

/** GET /v1/pods */
export interface PodListResponse {
  pods: PodSummary[];
}

/** GET /healthz */
export interface HealthResponse {
  ok: true;
}

/** GET /readyz when ready (otherwise 503 with an ErrorBody). */
export interface ReadyResponse {
  ready: true;
}

/** One readiness check (`/readyz?verbose` lists them as text; `/v1/status` as `readiness`). */
export interface ReadinessCheckView {
  name: string;
  ok: boolean;
  /** Why the check fails; absent when it holds. */
  reason?: string;
}

/** Readiness and the checks it is made of, in order. */
export interface ReadinessView {
  ready: boolean;
  checks: ReadinessCheckView[];
}

/** GET /v1/status (and `berth status`). */
export interface StatusView {
  version: string;
  pid: number;
  state: string;
  /** The same readiness as /readyz. */
  ready: boolean;
  /** The checks behind `ready` (as /readyz?verbose). */
  readiness: ReadinessCheckView[];
  startedAt: string | null;
  uptimeSeconds: number;
  dataDir: string;
  pluginsDir: string;
  /** registrar, or observe (berth watches a directory another registrar owns). */
  mode: 'registrar' | 'observe';
  deprecatedPluginsDir: string | null;
  api: { socket: string; tcp: string | null };
  counts: {
    types: number;
    plugins: number;
    instances: number;
    sockets: { total: number } & Record<SocketState, number>;
    pods: number;
    secrets: number;
    configMaps: number;
    watchesOpen: number;
    eventClients: number;
  };
  objects: { source: string; strategy: string };
  /** Every plugin type the daemon accepts, with its current plugins. */
  handlers: Array<{ type: string; builtin: boolean; plugins: number }>;
  /** The cluster view; null when `cluster:` is not configured. */
  cluster: {
    node: string;
    leaseState: string;
    /** Seconds since this daemon's last accepted write to etcd; null before the first. */
    lastPublishAgeSeconds: number | null;
    /** Whether the fleet view cannot confirm it sees etcd's data (always true with the reader off). */
    stale: boolean;
  } | null;
  storage: {
    path: string;
    /** Whether registry writes reach the disk; null before the registry exists. */
    health: StorageHealthView | null;
    /** The last time the database file was found deleted while berth ran and was re-created from memory. */
    recreated: { at: string | null; message: string } | null;
    corruption: {
      path: string;
      movedTo: string;
      at: string | null;
      error: { code: string; message: string };
    } | null;
  };
}

/** The registry's storage health in /v1/status (times as ISO strings). */
export type StorageHealthView =
  | { state: 'ok'; failures: number }
  | {
      state: 'failing';
      failures: number;
      since: string | null;
      lastError: { code: string; message: string };
      pendingDeletes: number;
      retryAt: string | null;
    };

/** One device of a device plugin resource (GET /v1/devices...). */
export interface DeviceStatusView {
  id: string;
  /** Healthy only when the plugin reported exactly "Healthy" and is connected. */
  health: 'Healthy' | 'Unhealthy';
  numaNodes: number[];
  /** The workload holding the device, if any. */
  allocatedTo: string | null;
}

/** A workload's allocation of a resource's devices, and what the plugin's Allocate answered. */
export interface DeviceAllocationView {
  resource: string;
  workload: string;
  deviceIds: string[];
  allocatedAt: string | null;
  /** Allocated devices that are now unhealthy or gone (flagged, never silently dropped). */
  unhealthyDeviceIds: string[];
  envs: Record<string, string>;
  mounts: Array<{ containerPath: string; hostPath: string; readOnly: boolean }>;
  devices: Array<{ containerPath: string; hostPath: string; permissions: string }>;
  annotations: Record<string, string>;
  cdiDevices: string[];
}

/** A device plugin resource: its connection, devices, topology and allocations. */
export interface DeviceResourceView {
  resource: string;
  /** `absent`: removed (or never seen) but still has allocations recorded. */
  state: 'connected' | 'disconnected' | 'absent';
  /** How it registered: the plugins directory or the legacy kubelet.sock. */
  via: 'plugins-dir' | 'kubelet-socket' | null;
  endpoint: string | null;
  options: { preStartRequired: boolean; getPreferredAllocationAvailable: boolean } | null;
  healthy: number;
  unhealthy: number;
  devices: DeviceStatusView[];
  /** Device ids per NUMA node; devices without topology are under `null`. */
  topology: Array<{ numaNode: number | null; deviceIds: string[] }>;
  connectedAt: string | null;
  disconnectedAt: string | null;
  /** When a disconnected resource will be removed unless its plugin comes back. */
  removeAt: string | null;
  /** The last snapshot the plugin sent that berth refused, if any. */
  lastError: string | null;
  allocations: DeviceAllocationView[];
  /** Present (true) in observe mode: berth only watches this resource's plugin; the kubelet owns it. */
  observed?: true;
}

/** GET /v1/devices */
export interface DeviceListResponse {
  resources: DeviceResourceView[];
}

/** GET /v1/devices/{resource} */
export interface DeviceResourceResponse {
  resource: DeviceResourceView;
}

/** GET /v1/devices/{resource}/allocations */
export interface DeviceAllocationListResponse {
  allocations: DeviceAllocationView[];
}

/** POST /v1/devices/{resource}/allocations (201), GET and DELETE .../allocations/{workload}. */
export interface DeviceAllocationResponse {
  allocation: DeviceAllocationView;
}

/** One registered CSI driver, like a CSINode's `spec.drivers` entry plus what berth asked the driver. */
export interface CsiDriverStatusView {
  name: string;
  nodeId: string;
  /** CSINode `allocatable.count`; null when the driver reports no limit. */
  maxVolumesPerNode: number | null;
  /** Sorted keys of the accessible topology (CSINode `topologyKeys`). */
  topologyKeys: string[];
  accessibleTopology: Record<string, string> | null;
  vendorVersion: string | null;
  /** Node service capabilities (STAGE_UNSTAGE_VOLUME, ...); null when NodeGetCapabilities failed. */
  capabilities: string[] | null;
  ready: boolean | null;
  /** The CSI version chosen (the highest 1.x the driver listed). */
  version: string;
  endpoint: string;
  socketPath: string;
  registeredAt: string | null;
  warnings: string[];
  /** Present (true) in observe mode: berth only asked the driver (read-only calls); the kubelet owns it. */
  observed?: true;
}

/** GET /v1/csi/drivers */
export interface CsiDriverListResponse {
  drivers: CsiDriverStatusView[];
}

/** DELETE /v1/csi/volumes/{driver}/{volumeId} */
export interface CsiVolumeDeleteResponse {
  driver: string;
  volumeId: string;
}

/** A DRA driver's instance: its endpoint, the service it speaks and its connection. */
export interface DraInstanceStatusView {
  endpoint: string;
  socketPath: string;
  service: string;
  state: 'idle' | 'connecting' | 'ready' | 'transient-failure' | 'shutdown';
  connected: boolean;
  registeredAt: string | null;
}

/** One DRA driver: whether it is usable and the instance calls go to. */
export interface DraDriverStatusView {
  name: string;
  usable: boolean;
  /** The instance calls go to now. */
  chosen: { endpoint: string; service: string } | null;
  unusableSince: string | null;
  /** Newest first. */
  instances: DraInstanceStatusView[];
  /** Present (true) in observe mode: berth only watches this driver; the kubelet prepares its claims. */
  observed?: true;
}

/** GET /v1/dra/drivers */
export interface DraDriverListResponse {
  drivers: DraDriverStatusView[];
}

/** One claim of POST /v1/dra/drivers/{name}/prepare|unprepare and its result. */
export interface DraClaimResultView {
  namespace: string;
  uid: string;
  name: string;
  /** False when the plugin reported an error for the claim or left it out. */
  ok: boolean;
  error: string | null;
  /** Prepare only. */
  devices?: Array<{ requestNames: string[]; poolName: string; deviceName: string; cdiDeviceIds: string[] }>;
}

/** POST /v1/dra/drivers/{name}/prepare and /unprepare */
export interface DraClaimsResponse {
  driver: string;
  endpoint: string;
  service: string;
  /** True when every claim succeeded. */
  ok: boolean;
  claims: DraClaimResultView[];
  /** UIDs the plugin answered for that were not asked about (ignored, as the kubelet does). */
  unexpected: string[];
}

/** The fleet view's freshness, on every /v1/cluster answer. */
export interface ClusterViewFields {
  /** The etcd revision the view reflects. */
  revision: string;
  /** True while the reader cannot confirm it sees the quorum's data; the last data is kept. */
  stale: boolean;
  /** Since when (ms since the epoch) the reader has had no confirmed contact, if stale. */
  staleSince?: number;
  /** When the view was last confirmed current (ms since the epoch). */
  lastContactAt: number;
  relists: number;
}

/** This daemon's own publishing to the cluster view. */
export interface ClusterSelfView {
  node: string;
  instance: string;
  leaseState: 'none' | 'held' | 'unknown' | 'lost' | 'conflict' | 'revoked' | 'released';
  lease: string | null;
  inSync: boolean;
  conflict: { holder: string; message: string } | null;
  lastError: string | null;
  lastPublishedAt: string | null;
}

/** A node in the fleet view, with how many plugins it publishes. */
export interface ClusterNodeView {
  node: string;
  /** Stable id of the daemon installation; a restart keeps it. */
  instance: string;
  /** The lease of the node's current run, decimal. */
  lease: string;
  /** When this run started publishing (ms since the epoch). */
  startedAt: number;
  daemon: string;
  key: string;
  modRevision: string;
  plugins: number;
}

/** A plugin instance in the fleet view. */
export interface ClusterPluginView {
  node: string;
  type: string;
  name: string;
  versions: string[];
  endpoint: string;
  instanceId: string;
  health: { state: 'healthy' | 'unhealthy' | 'unknown'; message?: string };
  /** What the type's handler recorded on the instance. */
  facts: Record<string, string>;
  key: string;
  modRevision: string;
  lease: string;
}

/** GET /v1/cluster/nodes */
export interface ClusterNodesResponse extends ClusterViewFields {
  self: ClusterSelfView;
  nodes: ClusterNodeView[];
}

/** GET /v1/cluster/plugins[?type=&name=&node=] */
export interface ClusterPluginsResponse extends ClusterViewFields {
  plugins: ClusterPluginView[];
}

/** GET /v1/objects/{secrets|configmaps}/{namespace}/{name}: the object as its source holds it. */
export interface ObjectResponse {
  apiVersion?: string;
  kind?: string;
  metadata: {
    name: string;
    namespace?: string;
    uid?: string;
    resourceVersion?: string;
    [key: string]: unknown;
  };
  immutable?: boolean;
  data?: Record<string, string>;
  [key: string]: unknown;
}
