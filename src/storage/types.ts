import type { BerthError, Lifecycle, PluginInstanceInfo } from '../common/index.js';

/**
 * The registry's whole persisted shape (Nomad's RegistryState): plugin type ->
 * plugin name -> every instance, newest first. A type may map to no names, and
 * a name to an empty list; both round-trip. Used for import/export and for the
 * registry's restore, never as the write path.
 */
export interface RegistryState {
  plugins: Record<string, Record<string, PluginInstanceInfo[]>>;
}

/**
 * One row-level change of the persisted registry. The registry sends only
 * what changed; a storage applies a list of them atomically, in order.
 */
export type RegistryChange =
  /**
   * Stores one instance. `front: true` makes it the newest of its (type, name)
   * (a new registration); `front: false` rewrites it where it stands (an
   * updated definition), or adds it as the newest if it is not stored.
   */
  | { op: 'put'; info: PluginInstanceInfo; front: boolean }
  /** Removes one instance (a no-op when it is not stored). */
  | { op: 'delete'; type: string; name: string; allocId: string };

/**
 * Whole-state import/export (the seed's StateStorage shape). Synchronous:
 * both storages can answer from what they hold without waiting on a write.
 */
export interface StateStorage {
  /**
   * The stored registry state, or undefined when nothing was ever stored.
   * Throws a BerthError BERTH_STORAGE_CORRUPT when the stored state could not be
   * read; the storage has then set the bad data aside and carries on empty, so
   * the caller learns that state was lost instead of silently starting afresh.
   * Throws BERTH_STORAGE_FAILED before start and after stop.
   */
  getDynamicPluginRegistryState(): RegistryState | undefined;
  /**
   * Replaces the whole stored state (import); returns once the write is
   * durable. Throws BERTH_INVALID_ARGUMENT for a state it could not read back.
   */
  putDynamicPluginRegistryState(state: RegistryState): void;
}

/** Counts of what a storage wrote, for tests, benchmarks and metrics. */
export interface StorageWriteStats {
  /** Committed transactions of applyChanges (one per call that succeeded). */
  transactions: number;
  /** RegistryChange entries committed. */
  changes: number;
  /** Rows SQLite reported as inserted, updated or deleted by those transactions. */
  rowsWritten: number;
  /** applyChanges calls that failed (nothing of them was applied). */
  failures: number;
}

/**
 * The storage the registry writes through: incremental, durable, and
 * asynchronous so that a write never blocks the caller's event loop.
 * Lifecycle: start() opens it (and restores nothing by itself); stop() waits
 * for writes in flight and closes it.
 */
export interface RegistryStorage extends StateStorage, Lifecycle {
  /**
   * Applies the changes, in order, in one transaction with one sync to disk.
   * Resolves once they are durable; rejects (BERTH_STORAGE_FAILED, or
   * BERTH_INVALID_ARGUMENT for a change it could not read back) with none of
   * them applied. An empty list is a probe: it writes a marker, so it fails
   * while the disk is full or read-only and succeeds once writes work again.
   * Calls are applied in the order they were made.
   */
  applyChanges(changes: readonly RegistryChange[]): Promise<void>;
  /** What was written so far. */
  readonly writeStats: StorageWriteStats;
  /**
   * Set while the storage can only be read (e.g. it was opened on a full
   * disk): the reason, which writes fail with until one lands.
   */
  readonly readOnly?: BerthError | undefined;
  /**
   * Tells `listener` when the stored file vanished and was created afresh
   * and empty; the owner of the state writes it back. Returns an unsubscribe.
   */
  onRecreated?(listener: StorageRecreatedListener): () => void;
}

/** Told that the storage was re-created empty; `error` says why (BERTH_STORAGE_FAILED). */
export type StorageRecreatedListener = (error: BerthError) => void;

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
