import type { EventError, Lifecycle, PluginInstanceInfo, RegistryEvent } from '../common/index.js';

/**
 * Turns a registry entry into something a consumer can use, typically a
 * connected client for the instance's socket (Nomad's PluginDispenser).
 */
export type PluginDispenser = (info: PluginInstanceInfo) => unknown | Promise<unknown>;

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
 * Whether the registry's writes reach its storage. `failures` counts every
 * failed write since the registry was created (a counter for metrics).
 */
export type StorageHealth =
  | { state: 'ok'; failures: number }
  | {
      state: 'failing';
      failures: number;
      /** When the current run of failures began (ms since the epoch). */
      since: number;
      lastError: EventError;
      /** Deregistrations hidden from reads whose delete has not reached the disk yet. */
      pendingDeletes: number;
      /** When the next retry runs (ms since the epoch), if one is scheduled. */
      retryAt?: number;
    };

/**
 * The dynamic plugin registry (Nomad's client/dynamicplugins): every instance
 * of a plugin per (type, name), newest first; the front instance is current.
 *
 * Changes are durable before they are visible: a register resolves only once
 * its row is on disk, and only then is it listed and announced. Changes that
 * arrive together (the same tick, or while a write is in flight) share one
 * transaction and one fsync.
 *
 * Lifecycle: start() starts the storage and restores from it (a storage that
 * is already running is restored from at construction, so the registry is
 * readable at once); the first change starts the registry if start() was not
 * called. stop() ends subscriptions and
 * waits, finishes the writes already accepted, and refuses later changes with
 * BERTH_SHUT_DOWN.
 */
export interface Registry extends Lifecycle {
  /**
   * Adds an instance at the front, or updates a known instance (same allocId)
   * in place when its definition changed. Throws BERTH_PLUGIN_INVALID at once
   * for a malformed entry. Resolves once the change is durable (an unchanged
   * re-register writes nothing and resolves at once). Rejects with the storage
   * error when it could not be persisted, and then nothing changed in memory
   * either: the instance is not listed and nothing is announced.
   */
  registerPlugin(info: PluginInstanceInfo): Promise<void>;
  /**
   * Removes one instance; a missing name or allocId is a no-op with no event;
   * rejects BERTH_NO_PLUGINS_FOR_TYPE for a type never seen. Argument errors
   * throw at once. A deregistration is never refused for a storage failure:
   * the instance is hidden and announced as deregistered at once, its delete
   * stays pending and is retried (storageRetry) until it lands, and
   * storageHealth() reports it meanwhile. It resolves after the write attempt.
   */
  deregisterPlugin(type: string, name: string, allocId: string): Promise<void>;
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
   * through a queue of the subscriber's own (bounded: a `lagged` event says how
   * many were dropped). Ends on abort or stop.
   */
  subscribe(type: string | undefined, options?: SubscribeOptions): AsyncIterable<RegistryEvent>;
  /** Replaces the dispenser of a type that has a real one (tests); undefined removes the stub. */
  stubDispenserForType(type: string, dispenser: PluginDispenser | undefined): void;
  /** Whether writes reach the storage; see StorageHealth. */
  storageHealth(): StorageHealth;
}
