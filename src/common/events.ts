/**
 * The one typed event union for everything that happens to a plugin. The
 * registry, the plugin manager and the daemon all speak it; the HTTP API
 * (server-sent events), the logs and the metrics are views of it.
 */

/** A registry entry: one instance of a plugin (Nomad's PluginInfo in berth form). */
export interface PluginInstanceInfo {
  type: string;
  name: string;
  version: string;
  /** Where the plugin serves; Nomad's ConnectionInfo. Required by the registry. */
  connectionInfo?: { socketPath: string };
  /** The instance id. Nomad calls it AllocID; berth's plugin-manager bridge uses the socket path. */
  allocId: string;
  options: Record<string, string>;
  /** Milliseconds since the epoch when this instance was (re-)registered; set by the registry. */
  registeredAt?: number;
}

export interface PluginRef {
  type: string;
  name: string;
}

export interface EventError {
  code: string;
  message: string;
}

export type PluginEvent =
  /** A socket appeared in the plugins directory (desired state gained it). */
  | { type: 'discovered'; at: number; socketPath: string }
  /** A socket left the plugins directory (desired state lost it). */
  | { type: 'socket-removed'; at: number; socketPath: string }
  /** A new instance became known to the registry. */
  | { type: 'registered'; at: number; plugin: PluginInstanceInfo }
  /** A known instance re-registered with different info (nomad#11786, fixed). */
  | { type: 'updated'; at: number; plugin: PluginInstanceInfo; previous: PluginInstanceInfo }
  /** An instance left the registry. */
  | { type: 'deregistered'; at: number; plugin: PluginInstanceInfo }
  /** A registration attempt failed; it will be retried at retryAt while the socket exists. */
  | {
      type: 'failed';
      at: number;
      socketPath: string;
      plugin?: PluginRef;
      error: EventError;
      retryAt: number | null;
      attempts: number;
    }
  /** This subscriber fell behind and `dropped` events were discarded; re-list to resynchronise. */
  | { type: 'lagged'; at: number; dropped: number }
  /**
   * A DRA driver has had no connected instance for the wipe delay (the moment
   * the kubelet wipes its ResourceSlices); `since` is when it became unusable.
   */
  | { type: 'driver-unusable'; at: number; plugin: PluginRef; since: number }
  /** Persisted state could not be used (e.g. corrupt database set aside). */
  | { type: 'storage-error'; at: number; error: EventError; path?: string }
  /** A device plugin resource's inventory changed (see handlers/device-plugin). */
  | DevicesChangedEvent;

/** Why a device plugin resource's inventory changed. */
export type DevicesChangedReason = 'connected' | 'snapshot' | 'disconnected' | 'removed';

export interface DevicesChangedEvent {
  type: 'devices-changed';
  at: number;
  /** The extended resource name, e.g. "vendor.com/gpu". */
  resource: string;
  reason: DevicesChangedReason;
  /** The device plugin's socket, when one is connected or was last. */
  endpoint?: string;
  healthy: number;
  unhealthy: number;
  /** Devices added, removed or whose health changed (at most 100 listed). */
  changed: string[];
}

export type PluginEventType = PluginEvent['type'];

/** The events the registry publishes to its subscribers. */
export type RegistryEvent = Extract<
  PluginEvent,
  { type: 'registered' | 'updated' | 'deregistered' | 'lagged' }
>;
