import type { Clock, Logger, PluginEvent, PluginInstanceInfo, RegistryEvent } from '../common/index.js';
import type { StateStorage } from '../storage/index.js';

/**
 * Turns a registry entry into something a consumer can use, typically a
 * connected client for the instance's socket (Nomad's PluginDispenser).
 */
export type PluginDispenser = (info: PluginInstanceInfo) => unknown | Promise<unknown>;

export interface RegistryOptions {
  /** Where the registry persists itself after every change; restored from on construction. */
  storage?: StateStorage;
  /** Dispensers by plugin type. */
  dispensers?: Record<string, PluginDispenser>;
  /** Used for any type without an entry in `dispensers` (berth's plugins all speak gRPC on a socket). */
  defaultDispenser?: PluginDispenser;
  clock?: Clock;
  logger?: Logger;
  /** Per-subscriber queue bound; when exceeded the subscriber gets a `lagged` event. Default: unbounded. */
  subscriberQueueSize?: number;
  /** Sees every registered/updated/deregistered/storage-error event (the daemon's tap). */
  onEvent?: (event: PluginEvent) => void;
}

export interface WaitForPluginOptions {
  signal?: AbortSignal;
}

export interface SubscribeOptions {
  /** Ends the stream when aborted. */
  signal?: AbortSignal;
  /** Overrides the registry's subscriberQueueSize for this subscriber. */
  queueSize?: number;
}

/**
 * The dynamic plugin registry (Nomad's client/dynamicplugins): every instance
 * of a plugin per (type, name), newest first; the front instance is current.
 */
export interface Registry {
  /**
   * Adds an instance at the front, or updates a known instance (same allocId)
   * in place when its definition changed. Persists, then publishes. Throws
   * BERTH_PLUGIN_INVALID for a malformed entry, or the storage error (after the
   * in-memory change) when persisting failed.
   */
  registerPlugin(info: PluginInstanceInfo): void;
  /** Removes one instance; a missing name or allocId is a no-op with no event. */
  deregisterPlugin(type: string, name: string, allocId: string): void;
  /** The current instance of every name of a type (copies, sorted by name); undefined for an unknown type. */
  listPlugins(type: string): PluginInstanceInfo[] | undefined;
  /** Every instance of one plugin, newest first (copies); empty when unknown. */
  listInstances(type: string, name: string): PluginInstanceInfo[];
  /** Every type the registry knows (sorted). */
  types(): string[];
  /** Runs the type's dispenser on the current instance. */
  dispensePlugin(type: string, name: string): Promise<unknown>;
  /** The instance of a plugin with the given allocId, current or not. */
  pluginForAlloc(type: string, name: string, allocId: string): PluginInstanceInfo;
  /** Alias of pluginForAlloc in berth's vocabulary (allocId is the instance id). */
  pluginForInstance(type: string, name: string, allocId: string): PluginInstanceInfo;
  /** Resolves with the current instance as soon as one exists; rejects with BERTH_ABORTED or BERTH_SHUT_DOWN. */
  waitForPlugin(type: string, name: string, options?: WaitForPluginOptions): Promise<PluginInstanceInfo>;
  /**
   * Events from now on for one type (or every type when undefined), in order,
   * through a queue of the subscriber's own. Ends on abort or shutdown.
   */
  subscribe(type: string | undefined, options?: SubscribeOptions): AsyncIterable<RegistryEvent>;
  /** Replaces the dispenser of a type that has a real one (tests); undefined removes the stub. */
  stubDispenserForType(type: string, dispenser: PluginDispenser | undefined): void;
  /** Ends every subscription and pending wait; idempotent. Later changes still apply but publish nothing. */
  shutdown(): void;
}
