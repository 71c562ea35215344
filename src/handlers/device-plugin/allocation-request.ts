/** What an allocation request may ask for, and which devices it gets (pure rules, no state). */
import { BerthError } from '../../common/index.js';
import { MAX_DEVICE_ID_LENGTH, WORKLOAD_NAME_RE } from './device-plugin-options.js';
import type { AllocationRequest } from './types.js';

export interface CheckedRequest {
  workload: string;
  count: number;
  deviceIds?: string[];
}

/** Checks a request against its resource's bound; throws BERTH_INVALID_ARGUMENT naming what is wrong. */
export function checkAllocationRequest(
  resource: string,
  request: AllocationRequest,
  maxCount: number,
): CheckedRequest {
  const bad = (message: string) =>
    new BerthError('BERTH_INVALID_ARGUMENT', `allocation of ${resource}: ${message}`);
  if (typeof request !== 'object' || request === null)
    throw bad('expected a JSON object {workload, count} or {workload, deviceIds}');
  const { workload, count, deviceIds } = request;
  if (typeof workload !== 'string' || !WORKLOAD_NAME_RE.test(workload)) {
    throw bad(
      'workload must be 1-253 characters of letters, digits, ".", "_", ":" and "-", starting with a letter or digit',
    );
  }
  if ((count === undefined) === (deviceIds === undefined))
    throw bad('give either count or deviceIds (not both)');
  if (deviceIds !== undefined) {
    if (!Array.isArray(deviceIds) || deviceIds.length === 0 || deviceIds.length > maxCount) {
      throw bad(`deviceIds must list 1 to ${maxCount} device ids`);
    }
    for (const id of deviceIds) {
      if (typeof id !== 'string' || id === '' || id.length > MAX_DEVICE_ID_LENGTH) {
        throw bad(`device ids are non-empty strings of at most ${MAX_DEVICE_ID_LENGTH} characters`);
      }
    }
    if (new Set(deviceIds).size !== deviceIds.length) throw bad('deviceIds lists a device twice');
    return { workload, count: deviceIds.length, deviceIds };
  }
  if (typeof count !== 'number' || !Number.isInteger(count) || count < 1 || count > maxCount) {
    throw bad(`count must be a whole number from 1 to ${maxCount}`);
  }
  return { workload, count };
}

/** The plugin's preference, kept only where it names free devices; topped up from the free list. */
export function pickPreferred(
  preferred: readonly string[],
  free: readonly string[],
  count: number,
): string[] {
  const freeSet = new Set(free);
  const chosen: string[] = [];
  for (const id of preferred) {
    if (chosen.length === count) break;
    if (freeSet.has(id) && !chosen.includes(id)) chosen.push(id);
  }
  for (const id of free) {
    if (chosen.length === count) break;
    if (!chosen.includes(id)) chosen.push(id);
  }
  return chosen;
}
