import { type BigIntStats, lstatSync, statSync } from 'node:fs';
import { flatString } from '../common/index.js';

/** What a path is right now, as far as the watcher cares. */
export type PathInspection =
  | { kind: 'socket'; identity: string }
  /** `modifiedNs`: the directory's mtime, which moves whenever an entry is added, removed or renamed. */
  | { kind: 'directory'; identity: string; modifiedNs: bigint }
  /** A regular file, FIFO, device, a symlink to one of those, a symlink loop, or (see below) a directory link. */
  | { kind: 'other' }
  /** Gone (or a dangling symlink): nothing to register at this path. */
  | { kind: 'missing' }
  /** Could not tell (e.g. EACCES); callers keep whatever they knew. */
  | { kind: 'error'; error: unknown };

/**
 * Stats `path` synchronously, following symlinks. Synchronous on purpose: a
 * stat of a socket in a local directory is a few microseconds in the kernel,
 * while the promise form sends it through libuv's thread pool and back, which
 * in a storm of 1,000 new sockets was the watcher's largest cost (the main
 * thread handing each stat to a worker and waiting to be scheduled again).
 * Plugin directories hold unix sockets, so they are local file systems.
 *
 * A symlink to a socket counts as a socket
 * at the link's path (connecting through it works), a symlink to anything
 * else does not. A symlink to a directory counts as a directory only with
 * `followDirectoryLinks` (for the roots themselves); below a root the watcher
 * never descends into one, which rules out loops and paths outside the tree.
 */
export function inspectPath(path: string, options: { followDirectoryLinks?: boolean } = {}): PathInspection {
  let stats: BigIntStats;
  try {
    stats = statSync(path, { bigint: true });
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return { kind: 'missing' };
    if (code === 'ELOOP') return { kind: 'other' };
    return { kind: 'error', error: err };
  }
  if (stats.isSocket()) return { kind: 'socket', identity: fileIdentity(stats) };
  if (!stats.isDirectory()) return { kind: 'other' };
  if (!options.followDirectoryLinks) {
    try {
      if (lstatSync(path).isSymbolicLink()) return { kind: 'other' };
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      return code === 'ENOENT' || code === 'ENOTDIR' ? { kind: 'missing' } : { kind: 'error', error: err };
    }
  }
  return { kind: 'directory', identity: directoryIdentity(stats), modifiedNs: stats.mtimeNs };
}

/**
 * Which file this is, not what it contains. dev + ino alone are not enough:
 * a socket deleted and re-created at the same path very often gets the same
 * inode number back. The birth time tells the two apart; where the file
 * system has none (reported as 0), the change time stands in, at the cost that
 * a chmod or touch then also counts as a new file.
 */
export function fileIdentity(stats: BigIntStats): string {
  const born = stats.birthtimeNs > 0n ? `b${stats.birthtimeNs}` : `c${stats.ctimeNs}`;
  return flatString(`${stats.dev}:${stats.ino}:${born}`); // kept while the file is known (flat-string.ts)
}

/**
 * Which directory this is. A directory's change time moves whenever an entry
 * is added or removed, so without a birth time only dev + ino are used.
 */
export function directoryIdentity(stats: BigIntStats): string {
  const born = stats.birthtimeNs > 0n ? `:b${stats.birthtimeNs}` : '';
  return flatString(`${stats.dev}:${stats.ino}${born}`);
}
