/**
 * One registrar per plugins directory.
 *
 * Two registrars on one directory both dial every plugin and both send
 * NotifyRegistrationStatus, so every plugin is told twice. A registrar
 * therefore holds a lock for its directory, and a second one exits naming
 * the owner. Observers take no lock (they tell nobody anything).
 *
 * The lock is a Linux abstract-namespace unix socket (a name starting with
 * NUL, no file), named from the directory's device and inode numbers:
 * - binding is atomic: exactly one process holds a name;
 * - the kernel frees it when the process dies, `kill -9` included: no stale
 *   lock file to clean up, nothing written into the directory;
 * - the owner answers whoever connects with its pid and data dir, so the
 *   refusal can name it;
 * - dev:ino, not the path: a bind mount or symlink reaching the same
 *   directory (a container's /plugins for the host's
 *   /var/lib/kubelet/plugins_registry) meets the same lock.
 * Node has no flock(2), and a pid file cannot tell a dead owner from a live
 * one reliably (pid reuse), which is why this and not a file.
 *
 * Limit: abstract names live in a network namespace. Two registrars in
 * different network namespaces (e.g. two pods without hostNetwork) do not
 * see each other's lock; run a containerised berth with `hostNetwork: true`
 * (a DaemonSet's usual setting for node agents). Outside Linux there are no
 * abstract sockets and the lock is not enforced (a warning says so).
 */
import { statSync } from 'node:fs';
import { connect, createServer, type Server } from 'node:net';
import { BerthError, errorMessage, type Logger } from '../common/index.js';

/** What the owner tells a peer that connects to its lock. */
export interface RegistrarLockOwner {
  pid: number;
  dataDir: string;
  pluginsDir: string;
}

export interface RegistrarLock {
  /** The abstract socket name (without its leading NUL), for logs. */
  readonly name: string;
  release(): Promise<void>;
}

/** Bytes an owner's answer may have; a longer one is not a berth lock answering. */
const MAX_ANSWER_BYTES = 8 * 1024;
/** How long a peer waits for the owner's answer. */
const ANSWER_TIMEOUT_MS = 2_000;
/** Binds tried when the owner dies between our bind and our connect. */
const BIND_ATTEMPTS = 3;

/**
 * The lock's abstract name for a directory: `berth-registrar:<dev>:<ino>:<birth ns>` (short, well
 * under 107 bytes). The birth time tells a new directory from a deleted one whose inode number it
 * reuses while a registrar of the old one still runs (0 where the file system keeps none).
 */
export function registrarLockName(pluginsDir: string): string {
  const stat = statSync(pluginsDir, { bigint: true });
  return `berth-registrar:${stat.dev}:${stat.ino}:${stat.birthtimeNs}`;
}

/**
 * Takes the lock of `owner.pluginsDir` or throws BERTH_PLUGINS_DIR_LOCKED
 * naming the directory and the owner's pid and data dir.
 */
export async function acquireRegistrarLock(
  owner: RegistrarLockOwner,
  logger: Logger,
): Promise<RegistrarLock> {
  const name = registrarLockName(owner.pluginsDir);
  if (process.platform !== 'linux') {
    logger.warn(
      { pluginsDir: owner.pluginsDir },
      'the one-registrar-per-directory lock needs Linux abstract sockets; it is not enforced here',
    );
    return { name, release: async () => {} };
  }
  const answer = `${JSON.stringify(owner)}\n`;
  for (let attempt = 1; ; attempt++) {
    const server = createServer((socket) => {
      socket.on('error', () => {});
      socket.end(answer);
    });
    const bound = await bind(server, `\0${name}`);
    if (bound === undefined) {
      // The daemon's other handles keep the process alive; the lock must not.
      server.unref();
      let released: Promise<void> | undefined;
      return { name, release: () => (released ??= close(server)) };
    }
    if (bound.code !== 'EADDRINUSE') {
      throw new BerthError(
        'BERTH_INVALID_ARGUMENT',
        `cannot take the registrar lock of ${owner.pluginsDir}: ${errorMessage(bound)}`,
        { cause: bound },
      );
    }
    const holder = await askOwner(name);
    if (holder === 'gone' && attempt < BIND_ATTEMPTS) continue; // died meanwhile: the name is free again
    throw lockedError(owner.pluginsDir, holder === 'gone' ? 'unknown' : holder);
  }
}

function lockedError(pluginsDir: string, holder: RegistrarLockOwner | 'unknown'): BerthError {
  const who =
    holder === 'unknown'
      ? 'another process (it did not say which)'
      : `berth pid ${holder.pid} (data dir ${holder.dataDir})`;
  return new BerthError(
    'BERTH_PLUGINS_DIR_LOCKED',
    `plugins directory ${pluginsDir} already has a registrar: ${who}. One registrar per directory: stop it, or start this berth with --observe to watch without registering`,
    {
      details: {
        pluginsDir,
        ...(holder === 'unknown' ? {} : { ownerPid: holder.pid, ownerDataDir: holder.dataDir }),
      },
    },
  );
}

function bind(server: Server, path: string): Promise<NodeJS.ErrnoException | undefined> {
  return new Promise((resolve) => {
    server.once('error', (err: NodeJS.ErrnoException) => resolve(err));
    server.listen(path, () => resolve(undefined));
  });
}

function close(server: Server): Promise<void> {
  return new Promise((resolve) => server.close(() => resolve()));
}

/** Reads the owner's answer: its identity, 'unknown' for a holder that says nothing useful, 'gone' if nobody listens. */
function askOwner(name: string): Promise<RegistrarLockOwner | 'unknown' | 'gone'> {
  return new Promise((resolve) => {
    const socket = connect(`\0${name}`);
    let text = '';
    let settled = false;
    const finish = (result: RegistrarLockOwner | 'unknown' | 'gone') => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      resolve(result);
    };
    const timer = setTimeout(() => finish('unknown'), ANSWER_TIMEOUT_MS);
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      text += chunk;
      if (text.length > MAX_ANSWER_BYTES) finish('unknown');
      else if (text.includes('\n')) finish(parseOwner(text.slice(0, text.indexOf('\n'))));
    });
    socket.on('end', () => finish(parseOwner(text)));
    socket.on('error', (err: NodeJS.ErrnoException) =>
      finish(err.code === 'ECONNREFUSED' ? 'gone' : 'unknown'),
    );
  });
}

function parseOwner(line: string): RegistrarLockOwner | 'unknown' {
  try {
    const value = JSON.parse(line) as Partial<RegistrarLockOwner>;
    if (
      typeof value.pid === 'number' &&
      typeof value.dataDir === 'string' &&
      typeof value.pluginsDir === 'string'
    ) {
      return { pid: value.pid, dataDir: value.dataDir, pluginsDir: value.pluginsDir };
    }
  } catch {
    // not a berth lock answering
  }
  return 'unknown';
}
