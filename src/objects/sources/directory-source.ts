/**
 * berth's embedded default ObjectSource: objects are files
 * `<root>/<resource>/<namespace>/<name>.json` (or `.yaml` / `.yml`), each holding
 * a Kubernetes Secret or ConfigMap. Creating a file adds the object, editing it
 * modifies it, deleting it deletes it.
 *
 * Changes are noticed through a recursive fs.watch (debounced) and, as a safety
 * net for missed events, a periodic rescan. A scan reads only files whose
 * stat signature (inode, size, mtime, ctime) changed and publishes only objects
 * whose content changed.
 *
 * resourceVersion: a source-wide counter, bumped on each observed change and
 * stamped on the changed object (so a watch resumes from a list's version like
 * with an apiserver). It starts over when the source is created; a version in a
 * file is ignored.
 *
 * Bad files never crash the source: a malformed file, or one whose metadata or
 * kind contradicts its path, is reported once (logger.warn with the path and
 * the problem, and problems()) and skipped. If the file held a good object
 * before, that last good object keeps being served (a half-written edit must not
 * delete a secret); deleting the file deletes it. Two files for one object
 * (x.json and x.yaml): the first in name order wins, the other is reported.
 */
import { constants, type FSWatcher, watch as fsWatch } from 'node:fs';
import { lstat, mkdir, open, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import {
  type Clock,
  type ClockTimer,
  errorMessage,
  type Logger,
  silentLogger,
  systemClock,
} from '../../common/index.js';
import { objectKeyString } from '../object-key.js';
import type { KubeObject, ObjectResource, ObjectSource } from '../source.js';
import { isObjectFileName, OBJECT_FILE_MAX_BYTES, objectNameOfFile, parseObjectFile } from './object-file.js';
import { sourceLifecycle } from './source-lifecycle.js';
import { VersionedStore } from './versioned-store.js';

export const DIRECTORY_RESOURCES: readonly ObjectResource[] = ['secrets', 'configmaps'];

export interface DirectorySourceOptions {
  root: string;
  logger?: Logger;
  clock?: Clock;
  /** Safety-net full rescan period. Default 10 s. */
  rescanIntervalMs?: number;
  /** Coalesces bursts of file events into one scan. Default 25 ms. */
  debounceMs?: number;
  /** Events kept for resuming watches. Default 1000. */
  historyLimit?: number;
}

export interface FileProblem {
  path: string;
  message: string;
}

export interface DirectorySource extends ObjectSource {
  readonly root: string;
  /** Resolves once the first scan is done (every call waits for it anyway). */
  ready(): Promise<void>;
  /** Scans now and resolves when done (e.g. after changes made where fs events are unavailable). */
  rescan(): Promise<void>;
  /** Files currently skipped, with why. */
  problems(): FileProblem[];
}

interface FileEntry {
  resource: ObjectResource;
  namespace: string;
  name: string;
  signature: string;
  text: string;
  /** The last good object parsed from this file, if any. */
  object: KubeObject | undefined;
  error: string | undefined;
}

export function createDirectorySource(options: DirectorySourceOptions): DirectorySource {
  const { root } = options;
  const clock = options.clock ?? systemClock;
  const logger = (options.logger ?? silentLogger).child({ component: 'directory-source', root });
  const rescanIntervalMs = options.rescanIntervalMs ?? 10_000;
  const debounceMs = options.debounceMs ?? 25;
  const store = new VersionedStore({
    assignUids: false,
    ...(options.historyLimit === undefined ? {} : { historyLimit: options.historyLimit }),
  });
  const files = new Map<string, FileEntry>();
  /** What was last published per object identity, as canonical JSON, to publish only real changes. */
  const published = new Map<string, string>();
  const duplicates = new Map<string, string>();
  const symlinkedDirs = new Set<string>();
  let watcher: FSWatcher | undefined;
  let debounceTimer: ClockTimer | undefined;
  let rescanTimer: ClockTimer | undefined;
  let scanning: Promise<void> | undefined;
  let scanAgain = false;
  let closed = false;

  const identity = (resource: ObjectResource, namespace: string, name: string) =>
    `${resource}:${objectKeyString(namespace, name)}`;

  const scanOnce = async (): Promise<void> => {
    const seen = new Set<string>();
    for (const resource of DIRECTORY_RESOURCES) {
      const resourceDir = join(root, resource);
      if (await isSymlink(resourceDir)) {
        if (!symlinkedDirs.has(resourceDir)) logger.warn({ path: resourceDir }, SYMLINK_PROBLEM);
        symlinkedDirs.add(resourceDir);
        continue;
      }
      symlinkedDirs.delete(resourceDir);
      // Symlinked namespace directories are skipped by listDirs (a symlink is not a directory entry).
      for (const namespace of await listDirs(resourceDir)) {
        const namespaceDir = join(resourceDir, namespace);
        for (const fileName of await listNames(namespaceDir)) {
          if (!isObjectFileName(fileName)) continue;
          const path = join(namespaceDir, fileName);
          const entry = await readEntry(path, resource, namespace, fileName);
          if (entry !== undefined) seen.add(path);
        }
      }
    }
    for (const path of [...files.keys()]) if (!seen.has(path)) files.delete(path);
    publish();
  };

  /**
   * An entry for a file that is refused outright (a symlink, too large): it
   * serves nothing, not even a previous good object, and is reported once.
   */
  const problemEntry = (
    path: string,
    resource: ObjectResource,
    namespace: string,
    fileName: string,
    problem: string,
    signature = '',
  ): FileEntry => {
    const previous = files.get(path);
    if (previous?.error !== problem) logger.warn({ path, err: problem }, 'skipping object file');
    const entry: FileEntry = {
      resource,
      namespace,
      name: objectNameOfFile(fileName),
      signature,
      text: '',
      object: undefined,
      error: problem,
    };
    files.set(path, entry);
    return entry;
  };

  /** Refreshes one file's entry; undefined if the file is not there (anymore) or unreadable. */
  const readEntry = async (
    path: string,
    resource: ObjectResource,
    namespace: string,
    fileName: string,
  ): Promise<FileEntry | undefined> => {
    let signature: string;
    let size: number;
    try {
      // lstat: a symlink is reported, never followed (it could point out of the tree).
      const st = await lstat(path);
      if (st.isSymbolicLink()) return problemEntry(path, resource, namespace, fileName, SYMLINK_PROBLEM);
      if (!st.isFile()) return undefined;
      signature = `${st.ino}:${st.size}:${st.mtimeMs}:${st.ctimeMs}`;
      size = st.size;
    } catch {
      return undefined;
    }
    const previous = files.get(path);
    if (previous !== undefined && previous.signature === signature) return previous;
    if (size > OBJECT_FILE_MAX_BYTES) {
      return problemEntry(path, resource, namespace, fileName, sizeProblem(size), signature);
    }
    let text: string;
    try {
      text = await readObjectFile(path);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') return undefined;
      if (code === 'ELOOP') return problemEntry(path, resource, namespace, fileName, SYMLINK_PROBLEM);
      if (code === 'EFBIG')
        return problemEntry(path, resource, namespace, fileName, errorMessage(err), signature);
      logger.warn({ path, err: errorMessage(err) }, 'cannot read object file; skipping it');
      return previous;
    }
    if (previous !== undefined && previous.text === text) {
      previous.signature = signature;
      return previous;
    }
    const parsed = parseObjectFile(resource, namespace, fileName, text);
    const entry: FileEntry = {
      resource,
      namespace,
      name: objectNameOfFile(fileName),
      signature,
      text,
      object: parsed.ok ? parsed.object : previous?.object,
      error: parsed.ok ? undefined : parsed.error,
    };
    if (!parsed.ok) {
      logger.warn(
        { path, err: parsed.error, keepsServing: entry.object !== undefined },
        'skipping malformed object file',
      );
    }
    files.set(path, entry);
    return entry;
  };

  /** Brings the versioned store in line with the files: put what changed, remove what is gone. */
  const publish = () => {
    const desired = new Map<string, { entry: FileEntry; path: string }>();
    const nextDuplicates = new Map<string, string>();
    for (const path of [...files.keys()].sort()) {
      const entry = files.get(path);
      if (entry?.object === undefined) continue;
      const id = identity(entry.resource, entry.namespace, entry.name);
      const owner = desired.get(id);
      if (owner !== undefined) {
        const message = `another file for the same object is already used: ${owner.path}`;
        if (duplicates.get(path) !== message)
          logger.warn({ path, err: message }, 'skipping duplicate object file');
        nextDuplicates.set(path, message);
        continue;
      }
      desired.set(id, { entry, path });
    }
    duplicates.clear();
    for (const [path, message] of nextDuplicates) duplicates.set(path, message);

    for (const [id, { entry }] of desired) {
      const object = entry.object;
      if (object === undefined) continue;
      const canonical = JSON.stringify(object);
      if (published.get(id) === canonical) continue;
      published.set(id, canonical);
      store.put(entry.resource, object);
    }
    for (const resource of DIRECTORY_RESOURCES) {
      for (const { namespace, name } of store.keys(resource)) {
        const id = identity(resource, namespace, name);
        if (desired.has(id)) continue;
        published.delete(id);
        store.remove(resource, namespace, name);
      }
    }
  };

  /** Runs scans one at a time; a request during a scan runs one more afterwards. */
  const scan = (): Promise<void> => {
    if (closed) return Promise.resolve();
    if (scanning !== undefined) {
      scanAgain = true;
      return scanning;
    }
    scanning = (async () => {
      try {
        do {
          scanAgain = false;
          try {
            await scanOnce();
          } catch (err) {
            logger.warn({ err: errorMessage(err) }, 'object directory scan failed');
          }
        } while (scanAgain && !closed);
      } finally {
        scanning = undefined;
      }
    })();
    return scanning;
  };

  const scheduleScan = () => {
    if (closed || debounceTimer !== undefined) return;
    debounceTimer = clock.setTimeout(() => {
      debounceTimer = undefined;
      void scan();
    }, debounceMs);
  };

  const armWatcher = () => {
    if (closed || watcher !== undefined) return;
    try {
      watcher = fsWatch(root, { recursive: true }, () => scheduleScan());
      watcher.on('error', (err) => {
        logger.warn({ err: errorMessage(err) }, 'watching the object directory failed; relying on rescans');
        watcher?.close();
        watcher = undefined;
      });
    } catch (err) {
      logger.warn({ err: errorMessage(err) }, 'cannot watch the object directory; relying on rescans');
    }
  };

  const periodic = () => {
    rescanTimer = undefined;
    if (closed) return;
    armWatcher();
    void scan().finally(() => {
      if (!closed) rescanTimer = clock.setTimeout(periodic, rescanIntervalMs);
    });
  };

  const ready = (async () => {
    try {
      // 0700: objects hold secrets (the mode is explicit, so umask 000 cannot widen it).
      await mkdir(root, { recursive: true, mode: 0o700 });
    } catch (err) {
      logger.warn({ err: errorMessage(err) }, 'cannot create the object directory');
    }
    // Watch before the first scan, so nothing changed during it is missed.
    armWatcher();
    await scan();
    if (!closed) rescanTimer = clock.setTimeout(periodic, rescanIntervalMs);
  })();

  // start() resolves after the first scan; stop() ends the watcher, the timers and every stream.
  const lifecycle = sourceLifecycle({
    ready: () => ready,
    async release() {
      closed = true;
      watcher?.close();
      watcher = undefined;
      if (debounceTimer !== undefined) clock.clearTimeout(debounceTimer);
      if (rescanTimer !== undefined) clock.clearTimeout(rescanTimer);
      await ready.catch(() => undefined);
      await scanning;
      store.close();
    },
  });

  return {
    root,
    ready: () => ready,
    rescan: async () => {
      await ready;
      await scan();
    },
    problems: () => {
      const out: FileProblem[] = [];
      for (const [path, entry] of files)
        if (entry.error !== undefined) out.push({ path, message: entry.error });
      for (const [path, message] of duplicates) out.push({ path, message });
      return out.sort((a, b) => a.path.localeCompare(b.path));
    },
    async get(resource, namespace, name, getOptions) {
      await ready;
      return store.get(resource, namespace, name, getOptions);
    },
    async list(resource, namespace, listOptions) {
      await ready;
      return store.list(resource, namespace, listOptions);
    },
    watch(resource, namespace, watchOptions) {
      return (async function* () {
        await ready;
        yield* store.watch(resource, namespace, watchOptions);
      })();
    },
    get state() {
      return lifecycle.state;
    },
    start: (signal) => lifecycle.start(signal),
    stop: () => lifecycle.stop(),
    [Symbol.asyncDispose]: () => lifecycle.stop(),
  };
}

async function listDirs(dir: string): Promise<string[]> {
  try {
    const entries = await readdir(dir, { withFileTypes: true });
    return entries.filter((e) => e.isDirectory() && !e.name.startsWith('.')).map((e) => e.name);
  } catch {
    return [];
  }
}

async function listNames(dir: string): Promise<string[]> {
  try {
    return await readdir(dir);
  } catch {
    return [];
  }
}

const SYMLINK_PROBLEM =
  'is a symlink; the directory source does not follow symlinks (they could point out of the tree)';

function sizeProblem(size: number): string {
  return `the file is ${size} bytes, more than the limit of ${OBJECT_FILE_MAX_BYTES} (1 MiB, as Kubernetes allows for a Secret or ConfigMap)`;
}

async function isSymlink(path: string): Promise<boolean> {
  try {
    return (await lstat(path)).isSymbolicLink();
  } catch {
    return false;
  }
}

/**
 * Reads an object file without following a symlink (O_NOFOLLOW, in case one
 * was swapped in after lstat), without blocking on a FIFO (O_NONBLOCK), and
 * never more than the size cap: fstat decides before anything is read.
 */
async function readObjectFile(path: string): Promise<string> {
  const handle = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  try {
    const st = await handle.stat();
    if (!st.isFile()) throw Object.assign(new Error('not a regular file'), { code: 'ENOENT' });
    if (st.size > OBJECT_FILE_MAX_BYTES)
      throw Object.assign(new Error(sizeProblem(st.size)), { code: 'EFBIG' });
    // One byte more than the cap tells a file that grew after fstat.
    const buffer = Buffer.alloc(Math.min(st.size, OBJECT_FILE_MAX_BYTES) + 1);
    let read = 0;
    for (;;) {
      const { bytesRead } = await handle.read(buffer, read, buffer.length - read, read);
      if (bytesRead === 0) break;
      read += bytesRead;
      if (read >= buffer.length) break;
    }
    if (read > OBJECT_FILE_MAX_BYTES) throw Object.assign(new Error(sizeProblem(read)), { code: 'EFBIG' });
    return buffer.subarray(0, read).toString('utf8');
  } finally {
    await handle.close();
  }
}
