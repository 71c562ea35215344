/**
 * The device plugin manager's public shapes: what the API and CLI show, and
 * what an allocation returns.
 */
export type { DevicesChangedEvent, DevicesChangedReason } from '../../common/index.js';

/** How a resource registered: through the plugins directory, or the legacy kubelet.sock. */
export type RegistrationPath = 'plugins-dir' | 'kubelet-socket';

/**
 * A resource's connection: `connected` while its ListAndWatch stream runs;
 * `disconnected` after the stream ended or after a restart until the plugin
 * registers again (devices unhealthy; removed at `removeAt` unless the plugin
 * comes back); `absent` for a resource that was removed (or never seen) but
 * still has allocations recorded.
 */
export type ResourceState = 'connected' | 'disconnected' | 'absent';

export interface DevicePluginOptionsView {
  preStartRequired: boolean;
  getPreferredAllocationAvailable: boolean;
}

export interface DeviceView {
  id: string;
  /** Healthy only when the plugin reported exactly "Healthy" and is connected. */
  health: 'Healthy' | 'Unhealthy';
  numaNodes: number[];
  /** The workload holding the device, if any. */
  allocatedTo: string | null;
}

export interface MountView {
  containerPath: string;
  hostPath: string;
  readOnly: boolean;
}

export interface DeviceSpecView {
  containerPath: string;
  hostPath: string;
  permissions: string;
}

/** What the plugin's Allocate answered: what a workload needs to use its devices. */
export interface AllocationResult {
  envs: Record<string, string>;
  mounts: MountView[];
  devices: DeviceSpecView[];
  annotations: Record<string, string>;
  cdiDevices: string[];
}

export interface AllocationView extends AllocationResult {
  resource: string;
  workload: string;
  deviceIds: string[];
  allocatedAt: number;
  /** Allocated devices that are now unhealthy or gone (flagged, never silently dropped). */
  unhealthyDeviceIds: string[];
}

export interface ResourceView {
  resource: string;
  state: ResourceState;
  via: RegistrationPath | null;
  endpoint: string | null;
  options: DevicePluginOptionsView | null;
  healthy: number;
  unhealthy: number;
  devices: DeviceView[];
  /** Device ids per NUMA node; devices without topology are under `null`. */
  topology: Array<{ numaNode: number | null; deviceIds: string[] }>;
  connectedAt: number | null;
  disconnectedAt: number | null;
  /** When a disconnected resource will be removed unless its plugin comes back. */
  removeAt: number | null;
  /** The last snapshot the plugin sent that berth refused, if any. */
  lastError: string | null;
  allocations: AllocationView[];
  /** Present (true) in observe mode: berth only watches this resource's plugin; the kubelet owns it. */
  observed?: true;
}

/** POST /v1/devices/{resource}/allocations: either `count` or explicit `deviceIds`. */
export interface AllocationRequest {
  workload: string;
  count?: number;
  deviceIds?: string[];
}
