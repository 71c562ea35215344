import { type FSWatcher, watch } from 'node:fs';
import { basename, join } from 'node:path';
import { isWithin } from './paths.js';

export interface TreeWatchOptions {
  root: string;
  /**
   * Something at `path` (the root or below it) may have changed; the caller
   * stats it to find out what. `undefined`: the platform could not say what.
   */
  onPath(path: string | undefined): void;
  /** A directory's watch failed and was dropped; adding it again (next walk) retries. */
  onError(dir: string, err: unknown): void;
  /** Use the platform's recursive watch on the root instead of one watch per directory. */
  native?: boolean;
  /** fs.watch, unless a test injects a failing one. */
  watch?: typeof watch;
}

interface DirectoryWatch {
  identity: string;
  watcher: FSWatcher;
}

/**
 * Node's own recursive fs.watch is native only on macOS and Windows. On Linux
 * (Node 20) it is emulated with one inotify watch per file *and* directory plus
 * synchronous stats, and it goes blind to a path once a file there is deleted
 * and re-created quickly (the per-file watch stays on the dead inode and the
 * path is never reported again). So elsewhere berth watches directories only,
 * one non-recursive watch each, like the kubelet's fsnotify watcher: a
 * directory watch reports creations, deletions and renames of its entries,
 * which is all plugin discovery needs, and costs one inotify watch per
 * directory instead of one per file.
 */
export function nativeRecursiveWatch(): boolean {
  return process.platform === 'darwin' || process.platform === 'win32';
}

/**
 * The watches for one directory tree. The caller's walk decides which
 * directories belong to the tree (it skips dot directories and nested roots)
 * and calls `add` for each, before reading it, so nothing created in between
 * is missed.
 */
export class TreeWatch {
  readonly #options: TreeWatchOptions;
  readonly #native: boolean;
  readonly #watches = new Map<string, DirectoryWatch>();
  #closed = false;

  constructor(options: TreeWatchOptions) {
    this.#options = options;
    this.#native = options.native ?? nativeRecursiveWatch();
  }

  /** True when `dir` is covered by a live watch. */
  isWatching(dir: string): boolean {
    if (this.#native) return this.#watches.has(this.#options.root);
    return this.#watches.has(dir);
  }

  /**
   * Watches `dir` unless it already is (as the same directory: a directory
   * re-created under the same name needs a new watch, the old one is on a dead
   * inode). Throws what fs.watch throws (ENOSPC, EMFILE, ENOENT...).
   */
  add(dir: string, identity: string): void {
    if (this.#closed) return;
    const root = this.#options.root;
    // A native recursive watch on the root covers every directory below it.
    if (this.#native && dir !== root) return;
    const existing = this.#watches.get(dir);
    if (existing?.identity === identity) return;
    if (existing !== undefined) this.#drop(dir);
    const fsWatch = this.#options.watch ?? watch;
    const watcher = this.#native
      ? fsWatch(dir, { recursive: true }, (_event, filename) => this.#report(dir, filename))
      : fsWatch(dir, (_event, filename) => this.#report(dir, filename));
    watcher.on('error', (err) => {
      if (this.#watches.get(dir)?.watcher !== watcher) return;
      this.#drop(dir);
      this.#options.onError(dir, err);
    });
    this.#watches.set(dir, { identity, watcher });
  }

  /** Drops the watches on `dir` and every directory below it (they were removed or renamed away). */
  removeWithin(dir: string): void {
    for (const watched of [...this.#watches.keys()]) {
      if (isWithin(watched, dir)) this.#drop(watched);
    }
  }

  close(): void {
    this.#closed = true;
    for (const dir of [...this.#watches.keys()]) this.#drop(dir);
  }

  #report(dir: string, filename: string | null): void {
    if (this.#closed) return;
    if (filename === null) {
      this.#options.onPath(undefined);
      return;
    }
    // Native recursive names are relative to the root ('' is the root itself);
    // a directory watch names the entry that changed.
    this.#options.onPath(join(dir, filename));
    // An event about the watched directory itself (deleted, renamed, chmod) carries its own base name.
    if (!this.#native && filename === basename(dir)) this.#options.onPath(dir);
  }

  #drop(dir: string): void {
    const entry = this.#watches.get(dir);
    this.#watches.delete(dir);
    try {
      entry?.watcher.close();
    } catch {
      // Closing a watch whose directory is gone can fail; it is dropped either way.
    }
  }
}
