/**
 * Which paths are mount points, from /proc/self/mountinfo (read fresh each
 * time: a restart, a driver or an operator may have changed it). Field 5 is
 * the mount point, with space, tab, newline and backslash octal-escaped.
 */
import { readFileSync } from 'node:fs';

export const MOUNTINFO_PATH = '/proc/self/mountinfo';

function unescapeMountPath(field: string): string {
  return field.replace(/\\([0-7]{3})/g, (_m, octal: string) =>
    String.fromCharCode(Number.parseInt(octal, 8)),
  );
}

/** The mount points listed in a mountinfo text. */
export function parseMountPoints(text: string): Set<string> {
  const points = new Set<string>();
  for (const line of text.split('\n')) {
    const fields = line.split(' ');
    const point = fields[4];
    if (point !== undefined && point !== '') points.add(unescapeMountPath(point));
  }
  return points;
}

/** A snapshot of the mount table; `mounts()` reads it again. */
export interface MountTable {
  isMountPoint(path: string): boolean;
  /** Mount points at or under `dir` (for "no mount left behind" checks). */
  under(dir: string): string[];
}

export function readMountTable(path = MOUNTINFO_PATH): MountTable {
  let points: Set<string>;
  try {
    points = parseMountPoints(readFileSync(path, 'utf8'));
  } catch {
    // No procfs (not Linux): nothing is known to be mounted.
    points = new Set();
  }
  return {
    isMountPoint: (p) => points.has(p),
    under: (dir) => [...points].filter((p) => p === dir || p.startsWith(`${dir}/`)),
  };
}
