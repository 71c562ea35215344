/**
 * Names that become path components under the mount root, and the paths
 * themselves. A driver name, volume id or workload name is one component:
 * non-empty, at most 128 bytes (the CSI spec's string bound, and what a
 * minimal driver must accept), no `/`, no NUL, not `.` or `..`. Anything else
 * could escape the mount root or collide, so it is refused before any call.
 */
import { join } from 'node:path';
import { BerthError } from '../common/index.js';

export const MAX_NAME_BYTES = 128;

/** Throws BERTH_INVALID_ARGUMENT (400) naming the field when `value` is not a safe path component. */
export function checkPathComponent(what: string, value: unknown): string {
  if (typeof value !== 'string' || value === '') {
    throw new BerthError('BERTH_INVALID_ARGUMENT', `${what}: required (a non-empty string)`);
  }
  const bytes = Buffer.byteLength(value, 'utf8');
  if (bytes > MAX_NAME_BYTES) {
    throw new BerthError(
      'BERTH_INVALID_ARGUMENT',
      `${what}: ${bytes} bytes is over the ${MAX_NAME_BYTES}-byte bound of a name under the CSI mount root`,
    );
  }
  if (value.includes('\0')) {
    throw new BerthError('BERTH_INVALID_ARGUMENT', `${what}: contains a NUL character`);
  }
  if (value.includes('/')) {
    throw new BerthError(
      'BERTH_INVALID_ARGUMENT',
      `${what}: ${JSON.stringify(value)} contains "/" and would leave its directory under the CSI mount root`,
    );
  }
  if (value === '.' || value === '..') {
    throw new BerthError(
      'BERTH_INVALID_ARGUMENT',
      `${what}: ${JSON.stringify(value)} would escape the CSI mount root`,
    );
  }
  return value;
}

/** Where one driver's volumes are staged and published, under the mount root. */
export interface VolumePaths {
  /** `<root>/<driver>/staging/<volumeId>`: one staging path per volume (not per usage, as Nomad). */
  staging(driver: string, volumeId: string): string;
  /** `<root>/<driver>/per-workload/<workload>`: the parent berth creates. */
  workloadDir(driver: string, workload: string): string;
  /** `<root>/<driver>/per-workload/<workload>/<volumeId>`: the target the driver creates. */
  target(driver: string, workload: string, volumeId: string): string;
}

export function volumePaths(mountRoot: string): VolumePaths {
  return {
    staging: (driver, volumeId) => join(mountRoot, driver, 'staging', volumeId),
    workloadDir: (driver, workload) => join(mountRoot, driver, 'per-workload', workload),
    target: (driver, workload, volumeId) => join(mountRoot, driver, 'per-workload', workload, volumeId),
  };
}
