import type { PluginInstanceInfo, PluginRef } from '../../common/index.js';
import type { AllocationRequest, AllocationView, ResourceView } from '../../handlers/device-plugin/types.js';
import type { KubeObject, ObjectResource } from '../../objects/source.js';
import type { EventBus } from '../event-bus.js';

/**
 * The narrow views of the daemon's components that the HTTP API reads. The
 * API depends on these, never on the components themselves, so its routes are
 * tested with small stand-ins.
 */

/** One socket as the plugin manager sees it (plugin-manager `SocketStatus`). */
export interface SocketStatus {
  socketPath: string;
  state: 'pending' | 'registered' | 'failed' | 'backoff';
  plugin?: PluginRef;
  endpoint?: string;
  versions?: string[];
  lastError?: { code: string; message: string };
  retryAt?: number;
  attempts: number;
  registeredAt?: number;
}

/** The registry's read side. */
export interface PluginCatalog {
  types(): string[];
  /** Current instance per name; undefined for a type never registered. */
  listPlugins(type: string): PluginInstanceInfo[] | undefined;
  /** Every instance of one plugin, newest first. */
  listInstances(type: string, name: string): PluginInstanceInfo[];
}

/** A workload that references secrets and configmaps (a Kubernetes Pod, as JSON). */
export interface Pod {
  apiVersion?: string;
  kind?: string;
  metadata: { name: string; namespace: string; uid: string; [key: string]: unknown };
  spec?: unknown;
  [key: string]: unknown;
}

export interface PodSummary {
  namespace: string;
  name: string;
  uid: string;
  secrets: string[];
  configMaps: string[];
}

export interface PodRegistry {
  /** Registers (or updates) the pod with both object managers. */
  apply(pod: Pod): PodSummary;
  /** Unregisters the stored pod; undefined when no pod has that namespace and name. */
  delete(namespace: string, name: string): PodSummary | undefined;
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
  status(): Record<string, unknown>;
  /** True once state is restored and the first scan is done, until shutdown begins. */
  isReady(): boolean;
}
