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
