import type { BerthError, PluginInstanceInfo } from '../common/index.js';

/**
 * The registry's persisted shape (Nomad's RegistryState): plugin type -> plugin
 * name -> every instance, newest first. A type may map to no names, and a name
 * to an empty list; both round-trip.
 */
export interface RegistryState {
  plugins: Record<string, Record<string, PluginInstanceInfo[]>>;
}

/**
 * Durable storage for berth's state. Synchronous on purpose: better-sqlite3 is
 * synchronous, so the registry can persist inside one call with no interleaving.
 */
export interface StateStorage {
  /**
   * The stored registry state, or undefined when nothing was ever stored.
   * Throws a BerthError BERTH_STORAGE_CORRUPT when the stored state could not be
   * read; the storage has then set the bad data aside and carries on empty, so
   * the caller learns that state was lost instead of silently starting afresh.
   */
  getDynamicPluginRegistryState(): RegistryState | undefined;
  /** Replaces the stored registry state; returns only once the write is durable. */
  putDynamicPluginRegistryState(state: RegistryState): void;
  /** Releases the storage; idempotent. Later gets and puts throw BERTH_STORAGE_FAILED. */
  close(): void;
}

/** What happened when a corrupt or unreadable database was set aside. */
export interface StorageCorruptionReport {
  /** The database path that could not be read. */
  path: string;
  /** Where the bad file (and its -wal/-shm) now lives. */
  movedTo: string;
  /** BERTH_STORAGE_CORRUPT, with the underlying failure as its cause. */
  error: BerthError;
  /** When it was set aside (ms since the epoch, from the storage's clock). */
  at: number;
}
