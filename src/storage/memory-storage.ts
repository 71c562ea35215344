import { BerthError, LifecycleController, type LifecycleState } from '../common/index.js';
import { applyChange } from './apply-change.js';
import { cloneState } from './clone-state.js';
import { encodeCheckedInstance } from './instance-codec.js';
import type { RegistryChange, RegistryState, RegistryStorage, StorageWriteStats } from './types.js';

/**
 * In-memory RegistryStorage for tests and for running without persistence.
 * It keeps a deep copy (never the caller's objects), so a test sees what a
 * real store would return instead of the live map by pointer (the reason
 * Nomad's MemDB-based tests missed its lost instance lists). Like the SQLite
 * storage it must be started before use and refuses everything once stopped.
 */
export function createMemoryStorage(): RegistryStorage {
  let stored: RegistryState | undefined;
  const stats: StorageWriteStats = {
    transactions: 0,
    changes: 0,
    rowsWritten: 0,
    failures: 0,
  };
  const lifecycle = new LifecycleController();
  const ensureOpen = () => {
    if (lifecycle.state === 'new') {
      throw new BerthError('BERTH_STORAGE_FAILED', 'state storage is not open: start the storage first');
    }
    if (lifecycle.state !== 'starting' && lifecycle.state !== 'running') {
      throw new BerthError('BERTH_STORAGE_FAILED', 'state storage is closed');
    }
  };
  return {
    get state(): LifecycleState {
      return lifecycle.state;
    },
    start: (signal) => lifecycle.start(signal),
    stop: () => lifecycle.stop(),
    [Symbol.asyncDispose]: () => lifecycle.stop(),
    get writeStats() {
      return { ...stats };
    },
    getDynamicPluginRegistryState() {
      ensureOpen();
      return stored === undefined ? undefined : cloneState(stored);
    },
    putDynamicPluginRegistryState(state) {
      ensureOpen();
      stored = cloneState(state);
    },
    async applyChanges(changes: readonly RegistryChange[]) {
      ensureOpen();
      // Checked first, so a bad change leaves the whole batch unapplied (as a transaction would).
      for (const change of changes) if (change.op === 'put') encodeCheckedInstance(change.info);
      stored ??= { plugins: {} };
      for (const change of changes) applyChange(stored, change);
      stats.transactions += 1;
      stats.changes += changes.length;
      stats.rowsWritten += changes.length;
    },
  };
}
