import type { RegistryState } from './types.js';

/**
 * Deep copy through JSON, the same encoding a real store applies: anything
 * that would not survive persistence (undefined fields, class instances,
 * shared references) does not survive this copy either.
 */
export function cloneState(state: RegistryState): RegistryState {
  return JSON.parse(JSON.stringify(state)) as RegistryState;
}
