import { BerthError } from '../common/index.js';
import { cloneState } from './clone-state.js';
import type { RegistryState, StateStorage } from './types.js';

/**
 * In-memory StateStorage for tests and for running without persistence.
 * It keeps a deep copy (never the caller's objects), so a test sees what a
 * real store would return instead of the live map by pointer (the reason
 * Nomad's MemDB-based tests missed its lost instance lists).
 */
export function createMemoryStorage(): StateStorage {
  let stored: RegistryState | undefined;
  let closed = false;
  const ensureOpen = () => {
    if (closed) throw new BerthError('BERTH_STORAGE_FAILED', 'state storage is closed');
  };
  return {
    getDynamicPluginRegistryState() {
      ensureOpen();
      return stored === undefined ? undefined : cloneState(stored);
    },
    putDynamicPluginRegistryState(state) {
      ensureOpen();
      stored = cloneState(state);
    },
    close() {
      closed = true;
    },
  };
}
