import { relative, sep } from 'node:path';

/** True when `path` is `dir` or lies below it. */
export function isWithin(path: string, dir: string): boolean {
  if (path === dir) return true;
  return path.startsWith(dir.endsWith(sep) ? dir : dir + sep);
}

/**
 * True when any segment of `path` below `root` starts with '.': dot files and
 * everything inside dot directories, at any depth. The kubelet checks only the
 * base name on events but not in its start-up walk; berth applies one rule to both.
 */
export function isHiddenBelow(root: string, path: string): boolean {
  const rel = relative(root, path);
  if (rel === '') return false;
  return rel.split(sep).some((segment) => segment.startsWith('.'));
}
