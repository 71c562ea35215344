import { spawnSync } from 'node:child_process';
import { closeSync, openSync, writeSync } from 'node:fs';
import { createTempDir } from '../temp-dir.js';

/**
 * Real small file systems for full-disk tests: a tmpfs of a given size,
 * mounted when the test runs as root (as CI does), and a filler that writes
 * until the kernel says ENOSPC.
 */
const isRoot = process.getuid?.() === 0;

/** Mounts a tmpfs of `size` (e.g. '2m') on `dir`; false when this process may not mount. */
export function mountTmpfs(dir: string, size: string): boolean {
  if (!isRoot) return false;
  return spawnSync('mount', ['-t', 'tmpfs', '-o', `size=${size},mode=0700`, 'tmpfs', dir]).status === 0;
}

export function unmountTmpfs(dir: string): void {
  if (spawnSync('umount', [dir]).status !== 0) spawnSync('umount', ['-l', dir]);
}

/** Writes into `path` until the file system says it is full; returns the bytes written. */
export function fillDisk(path: string): number {
  const fd = openSync(path, 'w');
  // Small chunks, so the disk is left with less than one page free.
  const chunk = Buffer.alloc(4096, 0x61);
  let written = 0;
  try {
    for (let i = 0; i < 1_000_000; i++) written += writeSync(fd, chunk);
    throw new Error('the file system never filled up');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOSPC') throw err;
  } finally {
    closeSync(fd);
  }
  return written;
}

/** Whether a tmpfs can be mounted here (tried once, on a scratch directory). */
export function canMountTmpfs(): boolean {
  const scratch = createTempDir();
  try {
    if (!mountTmpfs(scratch.path, '64k')) return false;
    unmountTmpfs(scratch.path);
    return true;
  } finally {
    scratch.remove();
  }
}
