import { relative, sep } from 'node:path';

const DOT = 0x2e;

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
  // The common case without path.relative(), which resolves both paths
  // against the working directory on each call (once per event in a storm):
  // below the root, with no '.' after a separator and no empty segment, no
  // segment is hidden and the path is normalized. Anything else is decided
  // by relative(): hidden names, '.' and '..' segments, paths outside.
  const prefix = root.endsWith(sep) ? root : root + sep;
  if (
    path.startsWith(prefix) &&
    path.charCodeAt(prefix.length) !== DOT &&
    !path.includes(`${sep}.`, prefix.length) &&
    !path.includes(`${sep}${sep}`, prefix.length)
  ) {
    return false;
  }
  const rel = relative(root, path);
  if (rel === '') return false;
  return rel.split(sep).some((segment) => segment.startsWith('.'));
}
