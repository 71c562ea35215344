import type { Dirent } from 'node:fs';
import { mkdir, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import {
  abortedError,
  BerthError,
  type ClockTimer,
  errorMessage,
  LifecycleComponent,
  type LifecycleState,
  type Logger,
} from '../common/index.js';
import type { PathInspection } from './inspect-path.js';
import { ListingCache } from './listing-cache.js';
import { isHiddenBelow, isWithin } from './paths.js';
import {
  FULL_RESCAN_EVERY,
  type PluginWatcherOptions,
  type ResolvedOptions,
  resolveOptions,
  THOROUGH_RESCAN_EVERY,
  WATCH_FAILING_RESCAN_MS,
  type WatchedRoot,
} from './plugin-watcher-options.js';
import { TreeWatch } from './tree-watch.js';

/**
 * How thorough a scan is. `statKnown` false: known sockets in a watched
 * directory are not statted (see FULL_RESCAN_EVERY). `skipUnchanged`: a
 * directory whose listing still holds is not read at all (listing-cache.ts);
 * only periodic scans skip.
 */
interface ScanMode {
  readonly statKnown: boolean;
  readonly skipUnchanged: boolean;
}

const THOROUGH_SCAN: ScanMode = Object.freeze({ statKnown: true, skipUnchanged: false });

/** new -> starting -> running -> stopped; a failed or aborted start also ends in stopped. */
/** The watcher's lifecycle state (common/lifecycle.ts). */
export type PluginWatcherState = LifecycleState;

interface KnownSocket {
  identity: string;
  root: WatchedRoot;
}

function deferred(): { promise: Promise<void>; resolve: () => void; reject: (err: unknown) => void } {
  let resolvePromise: () => void = () => {};
  let rejectPromise: (err: unknown) => void = () => {};
  const promise = new Promise<void>((res, rej) => {
    resolvePromise = res;
    rejectPromise = rej;
  });
  return { promise, resolve: resolvePromise, reject: rejectPromise };
}

/**
 * Finds plugin sockets (kubelet `pluginwatcher`) and keeps the desired state
 * in step with the socket files under one directory tree (plus an optional
 * deprecated one):
 *
 * - a start-up walk, a watch on every directory of the tree (tree-watch.ts),
 *   and a periodic full rescan that repairs whatever the watch missed (inotify
 *   overflow, ENOSPC, platforms whose watcher never reports sockets, such as
 *   macOS FSEvents: krustlet#445) and re-creates a vanished root;
 * - only sockets count; any path with a segment below the root starting with
 *   '.' is ignored; symlinks to sockets count at the link's path, symlinked
 *   directories are not descended into (no loops, nothing outside the tree);
 * - a socket is added to the desired state only when it is new to the watcher
 *   or is a different file than before (see fileIdentity), so duplicate events
 *   and rescans never force a needless re-registration;
 * - a socket that is deleted, renamed away or replaced by a non-socket is
 *   removed from the desired state. The kubelet ignores renames away and keeps
 *   such a plugin registered; berth deregisters it, because nothing can reach
 *   the plugin at that path any more.
 *
 * Every filesystem decision runs through one serial queue, so an event and a
 * rescan never race on the same path. The watcher removes only entries it
 * added itself; an entry someone else removed (e.g. a liveness failure) is not
 * re-added until the socket file is re-created.
 */
export class PluginWatcher extends LifecycleComponent {
  /** Resolves after the first full scan; rejects if start fails or the watcher stops before that. */
  readonly ready: Promise<void>;

  readonly #options: ResolvedOptions;
  readonly #log: Logger;
  readonly #ready = deferred();
  readonly #known = new Map<string, KnownSocket>();
  /** Paths with an inspection queued but not yet started: a second event for one adds nothing. */
  readonly #pendingInspections = new Set<string>();
  /** Set once the first scan is done: from then on the periodic rescan timer may run. */
  #scanned = false;
  /** The signal start() was given: an abort during the first scan is reported as BERTH_ABORTED. */
  #startSignal: AbortSignal | undefined;
  #abortedStart: Promise<void> | undefined;
  #tail: Promise<void> = Promise.resolve();
  #queuedScan: Promise<void> | undefined;
  /** How thorough the queued scan is: as thorough as the most thorough request it joined. */
  #queuedMode: ScanMode | undefined;
  /** How thorough the scan in progress is (walks outside a scan, after an event, are thorough). */
  #mode: ScanMode = THOROUGH_SCAN;
  readonly #listings = new ListingCache();
  #periodicScans = 0;
  #timer: ClockTimer | undefined;
  /** The armed timer's interval (a failing watch re-arms a longer one at WATCH_FAILING_RESCAN_MS). */
  #timerMs = 0;

  constructor(options: PluginWatcherOptions) {
    super();
    this.#options = resolveOptions(options);
    this.#log = this.#options.logger;
    this.ready = this.#ready.promise;
    // Nobody has to await `ready`; its rejection must not become an unhandled rejection.
    this.ready.catch(() => {});
  }

  /**
   * Creates the directories, starts watching and resolves after the first
   * full scan. Idempotent. A signal aborted already stops the watcher and
   * rejects with BERTH_ABORTED.
   */
  override start(signal?: AbortSignal): Promise<void> {
    if (signal?.aborted && this.state === 'new') {
      this.#abortedStart ??= this.stop().then(() => {
        throw abortedError(signal, 'plugin watcher start');
      });
      return this.#abortedStart;
    }
    if (this.stopBegun) {
      return Promise.reject(
        new BerthError('BERTH_SHUT_DOWN', 'plugin watcher is stopped; create a new one to start again'),
      );
    }
    if (this.state === 'new') this.#startSignal = signal;
    return super.start(signal);
  }

  /**
   * One full scan of every directory, after any work already queued. A call
   * while another scan is queued but not yet begun joins that scan.
   */
  rescan(): Promise<void> {
    return this.#rescan(THOROUGH_SCAN);
  }

  #rescan(mode: ScanMode): Promise<void> {
    if (this.stopBegun) {
      return Promise.reject(new BerthError('BERTH_SHUT_DOWN', 'plugin watcher is stopped'));
    }
    const queued = this.#queuedMode;
    this.#queuedMode =
      queued === undefined
        ? mode
        : {
            statKnown: queued.statKnown || mode.statKnown,
            skipUnchanged: queued.skipUnchanged && mode.skipUnchanged,
          };
    this.#queuedScan ??= this.#enqueue(async () => {
      this.#queuedScan = undefined;
      this.#mode = this.#queuedMode ?? THOROUGH_SCAN;
      this.#queuedMode = undefined;
      try {
        await this.#scanAll();
      } finally {
        this.#mode = THOROUGH_SCAN;
      }
    });
    return this.#queuedScan;
  }

  /** The socket paths this watcher has put in the desired state, sorted. */
  knownSockets(): string[] {
    return [...this.#known.keys()].sort();
  }

  protected override async onStart(): Promise<void> {
    const signal = this.#startSignal;
    try {
      for (const root of this.#options.roots) await this.#createRoot(root);
      if (this.#options.useFsWatch) {
        for (const root of this.#options.roots) {
          root.tree = new TreeWatch({
            root: root.path,
            onPath: (path) => this.#onFsEvent(root, path),
            onError: (_dir, err) => this.#reportWatchFailure(root, err),
            ...(this.#options.watch === undefined ? {} : { watch: this.#options.watch }),
          });
        }
      }
      await this.rescan();
      // stop() (or the signal) may have run while the first scan was in progress.
      if (this.stopBegun) {
        throw signal?.aborted
          ? abortedError(signal, 'plugin watcher start')
          : new BerthError('BERTH_SHUT_DOWN', 'plugin watcher was stopped before its first scan finished');
      }
      if (this.#options.useFsWatch && this.#options.rescanIntervalMs === 0) {
        // With no rescan to fall back on, a watch that could not be set up means a blind watcher.
        const broken = this.#options.roots.find((root) => !root.tree?.isWatching(root.path));
        if (broken !== undefined) {
          throw new BerthError('BERTH_WATCHER_FAILED', `failed to start plugin fsWatcher on ${broken.path}`);
        }
      }
      this.#scanned = true;
      this.#armTimer();
      this.#log.info(
        { dirs: this.#options.roots.map((root) => root.path), sockets: this.#known.size },
        'plugin watcher started',
      );
      this.#ready.resolve();
    } catch (err) {
      this.#ready.reject(err);
      throw err;
    }
  }

  /** Stops watching and rescanning; waits for the filesystem work in progress. */
  protected override async onStop(): Promise<void> {
    if (this.#timer !== undefined) this.#options.clock.clearTimeout(this.#timer);
    this.#timer = undefined;
    for (const root of this.#options.roots) {
      root.tree?.close();
      root.tree = undefined;
    }
    // A no-op once start has settled `ready`; otherwise `ready` must not hang forever.
    this.#ready.reject(new BerthError('BERTH_SHUT_DOWN', 'plugin watcher was stopped before it was ready'));
    await this.#tail;
  }

  async #createRoot(root: WatchedRoot): Promise<void> {
    if (!this.#options.createMissing) return;
    try {
      await mkdir(root.path, { recursive: true, mode: 0o755 });
    } catch (err) {
      throw new BerthError(
        'BERTH_WATCHER_FAILED',
        `error (re-)creating root ${root.path}: ${errorMessage(err)}`,
        {
          cause: err,
        },
      );
    }
  }

  /**
   * Runs filesystem work one task at a time; a failing task is logged and
   * does not stop the queue. Inspections are synchronous stats, so a burst of
   * events (a storm's thousand sockets arrive in one inotify read) would run
   * as one long turn: each task waits for a turn with time left (the turn
   * budget the reconciler and the registration attempts share).
   */
  #enqueue(task: () => Promise<void>): Promise<void> {
    const run = this.#tail.then(async () => {
      await this.#options.turn.pass();
      await task();
    });
    this.#tail = run.catch((err: unknown) => this.#log.error({ err }, 'plugin watcher task failed'));
    return run;
  }

  #armTimer(): void {
    const failing = this.#options.roots.some((root) => root.watchFailing);
    const regular = this.#options.rescanIntervalMs;
    // A failing watch leaves directories that only a rescan sees: scan them often until it is back.
    const interval = failing
      ? Math.min(regular === 0 ? Number.POSITIVE_INFINITY : regular, WATCH_FAILING_RESCAN_MS)
      : regular;
    if (!this.#scanned || this.stopBegun || interval === 0) return;
    this.#timerMs = interval;
    // Re-armed only after the scan finishes, so a slow scan delays the next one instead of piling up.
    this.#timer = this.#options.clock.setTimeout(() => {
      this.#timer = undefined;
      this.#periodicScans += 1;
      this.#rescan({
        statKnown: this.#periodicScans % FULL_RESCAN_EVERY === 0,
        skipUnchanged: this.#periodicScans % THOROUGH_RESCAN_EVERY !== 0,
      })
        .catch(() => {})
        .finally(() => this.#armTimer());
    }, interval);
  }

  async #scanAll(): Promise<void> {
    for (const root of this.#options.roots) {
      if (this.stopBegun) return;
      await this.#scanRoot(root);
    }
  }

  /** Re-creates a vanished root, then reconciles the whole tree (the walk re-establishes watches). */
  async #scanRoot(root: WatchedRoot): Promise<void> {
    root.failedThisScan = false;
    let dir = this.#options.inspect(root.path, { followDirectoryLinks: true });
    if (dir.kind === 'missing' && this.#options.createMissing) {
      try {
        await mkdir(root.path, { recursive: true, mode: 0o755 });
        this.#log.warn({ dir: root.path }, 'plugin directory was missing; re-created it');
      } catch (err) {
        this.#log.error(
          { err, dir: root.path },
          `error (re-)creating root ${root.path}: ${errorMessage(err)}`,
        );
      }
      dir = this.#options.inspect(root.path, { followDirectoryLinks: true });
    }
    if (dir.kind !== 'directory') {
      root.tree?.removeWithin(root.path);
      if (dir.kind !== 'missing') {
        this.#log.error({ dir: root.path, found: dir.kind }, 'plugin directory is not a readable directory');
      }
    }
    await this.#syncTree(root, root.path);
    if (root.watchFailing && !root.failedThisScan && root.tree?.isWatching(root.path)) {
      root.watchFailing = false;
      this.#log.info({ dir: root.path }, 'watching plugin directory again');
    }
  }

  /** Watches `dir` (inspected by the caller) before it is read, so an entry created in between is seen by the watch or the read. */
  #watchDirectory(root: WatchedRoot, dir: string, found: PathInspection): void {
    if (root.tree === undefined || this.stopBegun) return;
    // The walk only gets here for real directories, or for the root (which may be a link).
    if (found.kind !== 'directory') return;
    try {
      root.tree.add(dir, found.identity);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      // Gone between the stat and the watch: the event for its removal follows.
      if (code === 'ENOENT' || code === 'ENOTDIR')
        this.#log.debug({ dir }, 'directory vanished before it was watched');
      else this.#reportWatchFailure(root, err);
    }
  }

  #reportWatchFailure(root: WatchedRoot, err: unknown): void {
    root.failedThisScan = true;
    const repair = `rescans every ${WATCH_FAILING_RESCAN_MS} ms find its sockets and retry the watch until it is back`;
    const fields = { err, dir: root.path };
    const message = `watching plugin directory failed: ${errorMessage(err)}; ${repair}`;
    if (root.watchFailing) this.#log.debug(fields, message);
    else this.#log.warn(fields, message);
    root.watchFailing = true;
    // Waiting for a regular rescan (up to 10 s) would leave the unwatched directory blind that long.
    if (this.#timer !== undefined && this.#timerMs > WATCH_FAILING_RESCAN_MS) {
      this.#options.clock.clearTimeout(this.#timer);
      this.#timer = undefined;
      this.#armTimer();
    }
  }

  #onFsEvent(root: WatchedRoot, path: string | undefined): void {
    if (this.stopBegun) return;
    if (path === undefined) {
      // The platform could not say what changed: look at everything.
      void this.rescan().catch(() => {});
      return;
    }
    if (this.#ownerRoot(path) !== root) return; // inside a nested root that reports it itself
    if (isHiddenBelow(root.path, path)) {
      this.#log.debug({ path }, 'ignoring dot-prefixed path');
      return;
    }
    if (this.#pendingInspections.has(path)) return;
    this.#pendingInspections.add(path);
    void this.#enqueue(async () => {
      this.#pendingInspections.delete(path);
      await this.#inspect(root, path);
    });
  }

  /** Decides what one changed path means now; the event type is not trusted (Node says 'rename' for both). */
  async #inspect(root: WatchedRoot, path: string): Promise<void> {
    if (this.stopBegun) return;
    if (path === root.path) {
      await this.#inspectRoot(root);
      return;
    }
    const found = this.#options.inspect(path);
    // Whatever is at `path` now, a directory watched there before is gone (a new one gets a new watch).
    if (found.kind !== 'directory' && found.kind !== 'error') root.tree?.removeWithin(path);
    switch (found.kind) {
      case 'socket':
        this.#observeSocket(root, path, found.identity);
        return;
      case 'directory':
        // New (or renamed-in) directory: its sockets may predate the watch on it.
        this.#forget(path, 'replaced by a directory');
        await this.#syncTree(root, path);
        return;
      case 'missing':
        // Deleted or renamed away; for a directory, everything below it went too.
        this.#log.debug({ path }, 'path is gone');
        // A known socket is a leaf: forget just it (O(1)), so removing N sockets costs O(N), not O(N²).
        if (this.#known.get(path)?.root === root) this.#forget(path, 'removed');
        else this.#forgetWithin(root, path, 'removed');
        return;
      case 'other':
        if (this.#known.has(path)) this.#forget(path, 'no longer a socket');
        else this.#log.debug({ path }, 'ignoring non-socket file');
        return;
      case 'error':
        this.#log.warn(
          { err: found.error, path },
          'cannot inspect path; keeping what was known until a rescan',
        );
        return;
    }
  }

  async #inspectRoot(root: WatchedRoot): Promise<void> {
    const dir = this.#options.inspect(root.path, { followDirectoryLinks: true });
    if (dir.kind === 'directory') {
      await this.#syncTree(root, root.path);
      return;
    }
    if (dir.kind === 'error') return;
    // The root itself went away: the watches in it are dead and every socket below it is gone.
    root.tree?.removeWithin(root.path);
    this.#forgetWithin(root, root.path, 'plugin directory removed');
    const next =
      this.#options.rescanIntervalMs > 0
        ? 'the next rescan re-creates it and watches it again'
        : 'rescans are disabled: call rescan() to re-create it';
    this.#log.warn({ dir: root.path }, `plugin directory vanished; ${next}`);
  }

  /**
   * Walks `dir` (any depth) adding new or changed sockets, then re-checks every
   * socket this watcher knows below `dir` that the walk did not meet, and
   * forgets those that are really gone or no longer sockets.
   */
  async #syncTree(root: WatchedRoot, dir: string): Promise<void> {
    const seen = new Set<string>();
    await this.#walk(root, dir, seen);
    const unseen: string[] = [];
    for (const [path, known] of this.#known) {
      if (known.root === root && !seen.has(path) && isWithin(path, dir)) unseen.push(path);
    }
    for (const path of unseen) {
      if (this.stopBegun) return;
      const found = this.#options.inspect(path);
      if (found.kind === 'socket') this.#observeSocket(root, path, found.identity);
      else if (found.kind === 'missing') this.#forget(path, 'removed');
      else if (found.kind !== 'error') this.#forget(path, 'no longer a socket');
    }
  }

  async #walk(root: WatchedRoot, dir: string, seen: Set<string>): Promise<void> {
    const readAtMs = Date.now(); // wall clock, as file timestamps are
    const found = this.#options.inspect(dir, { followDirectoryLinks: true });
    this.#watchDirectory(root, dir, found);
    if (found.kind !== 'directory') this.#listings.delete(dir);
    else if (this.#mode.skipUnchanged) {
      const listing = this.#listings.get(dir, found.identity, found.modifiedNs);
      if (listing !== undefined) {
        for (const path of listing.sockets) seen.add(path);
        for (const sub of listing.subdirs) {
          if (this.stopBegun) return;
          if (this.#ownerRoot(sub) === root) await this.#walk(root, sub, seen);
        }
        this.#inspectCandidates(root, listing.links, seen);
        return;
      }
    }
    let entries: Dirent[];
    try {
      entries = await readdir(dir, { withFileTypes: true });
    } catch (err) {
      this.#listings.delete(dir);
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' || code === 'ENOTDIR')
        this.#log.debug({ dir }, 'directory vanished during the walk');
      else this.#log.warn({ err, dir }, 'cannot read plugin directory');
      return;
    }
    const statKnown = this.#mode.statKnown || root.watchFailing || !root.tree?.isWatching(dir);
    const listing = { sockets: [] as string[], subdirs: [] as string[], links: [] as string[] };
    const candidates: string[] = [];
    for (const entry of entries) {
      if (this.stopBegun) return;
      const path = join(dir, entry.name);
      if (entry.name.startsWith('.')) {
        this.#log.debug({ path }, 'ignoring dot-prefixed path');
        continue;
      }
      if (entry.isDirectory()) {
        listing.subdirs.push(path);
        if (this.#ownerRoot(path) === root) await this.#walk(root, path, seen);
        continue;
      }
      if (!entry.isSocket() && !entry.isSymbolicLink()) {
        this.#log.debug({ path }, 'ignoring non-socket file');
        continue;
      }
      if (entry.isSymbolicLink()) listing.links.push(path);
      else listing.sockets.push(path);
      if (!statKnown && entry.isSocket() && this.#known.get(path)?.root === root) {
        seen.add(path); // still there; a re-creation in place reaches the watch as an event
        continue;
      }
      candidates.push(path);
    }
    const complete = this.#inspectCandidates(root, candidates, seen);
    if (found.kind === 'directory' && complete) {
      this.#listings.set(
        dir,
        { identity: found.identity, modifiedNs: found.modifiedNs, ...listing },
        readAtMs,
      );
    }
  }

  /**
   * Inspects one directory's candidates, each with a synchronous stat (see
   * inspect-path.ts), in one go. False if some could not be inspected (their
   * directory must be read again).
   */
  #inspectCandidates(root: WatchedRoot, candidates: string[], seen: Set<string>): boolean {
    if (candidates.length === 0) return true;
    const inspected = candidates.map((path) => this.#options.inspect(path));
    let complete = true;
    inspected.forEach((found, i) => {
      const path = candidates[i] as string;
      if (found.kind === 'socket') {
        seen.add(path);
        this.#observeSocket(root, path, found.identity);
      } else {
        if (found.kind === 'error') complete = false;
        this.#log.debug({ path, found: found.kind }, 'ignoring symlink that does not point at a socket');
      }
    });
    return complete;
  }

  #observeSocket(root: WatchedRoot, path: string, identity: string): void {
    if (this.stopBegun) return;
    const known = this.#known.get(path);
    if (known !== undefined && known.identity === identity && known.root === root) return;
    try {
      this.#options.desiredState.addOrUpdatePlugin(path, { foundInDeprecatedDir: root.deprecated });
    } catch (err) {
      this.#log.error({ err, socketPath: path }, 'error adding socket path to desired state cache');
      return;
    }
    this.#known.set(path, { identity, root });
    const message = known === undefined ? 'plugin socket found' : 'plugin socket re-created: new generation';
    this.#log.info({ socketPath: path, foundInDeprecatedDir: root.deprecated }, message);
  }

  #forget(path: string, reason: string): void {
    if (this.stopBegun || !this.#known.delete(path)) return;
    this.#options.desiredState.removePlugin(path);
    this.#log.info({ socketPath: path, reason }, 'plugin socket gone');
  }

  #forgetWithin(root: WatchedRoot, dir: string, reason: string): void {
    for (const [path, known] of [...this.#known]) {
      if (known.root === root && isWithin(path, dir)) this.#forget(path, reason);
    }
  }

  /** The innermost watched root containing `path` (roots may nest). */
  #ownerRoot(path: string): WatchedRoot | undefined {
    let owner: WatchedRoot | undefined;
    for (const root of this.#options.roots) {
      if (isWithin(path, root.path) && (owner === undefined || root.path.length > owner.path.length))
        owner = root;
    }
    return owner;
  }
}

export function createPluginWatcher(options: PluginWatcherOptions): PluginWatcher {
  return new PluginWatcher(options);
}
