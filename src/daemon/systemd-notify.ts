import type { Logger } from '../common/index.js';

/**
 * sd_notify(3): tells systemd (or any supervisor that sets NOTIFY_SOCKET)
 * that berth is ready, stopping, still alive, and what it is doing. Without
 * NOTIFY_SOCKET every call is a no-op.
 *
 * How the datagram is sent: Node has no AF_UNIX SOCK_DGRAM socket. Spawning
 * systemd-notify(1) sends from another process, which systemd drops under the
 * default NotifyAccess=main, and even with NotifyAccess=all it can miss the
 * sender's cgroup when the helper exits before the message is read (systemd
 * fixed that only in 254 with pidfds). So berth sends from its own process
 * with `node-unix-socket` (MIT, N-API, built with napi-rs): it ships prebuilt
 * binaries for Linux x64/arm64 (glibc and musl), so installing berth compiles
 * nothing, and its releases track current Node versions. (`unix-dgram` is the
 * older choice, but it builds with node-gyp at install time.) It is an
 * optional dependency, loaded only when NOTIFY_SOCKET is set; without it berth
 * logs one warning and runs without notifications. An abstract-namespace
 * socket (`@name`) is not supported by it: the same warning, no notifications.
 */
export interface SystemdNotifier {
  /** False when NOTIFY_SOCKET is unset or cannot be used: notify() does nothing. */
  readonly active: boolean;
  /** Half of WATCHDOG_USEC when systemd's watchdog is on for this process: how often to send WATCHDOG=1. */
  readonly watchdogIntervalMs: number | undefined;
  /** Sends `KEY=value` lines in one datagram (`{ READY: '1', STATUS: 'ready' }`). */
  notify(fields: Record<string, string>): void;
  close(): void;
}

export interface SystemdNotifierOptions {
  env?: Readonly<Record<string, string | undefined>>;
  logger: Logger;
  pid?: number;
}

interface DgramSocketLike {
  sendTo(buf: Buffer, offset: number, length: number, path: string, cb?: (err?: Error) => void): void;
  close(): void;
  on(event: 'error', listener: (err: Error) => void): unknown;
}

const inactive: SystemdNotifier = {
  active: false,
  watchdogIntervalMs: undefined,
  notify: () => {},
  close: () => {},
};

/** The watchdog interval when WATCHDOG_USEC is set for this process (WATCHDOG_PID unset or ours). */
export function watchdogIntervalMs(
  env: Readonly<Record<string, string | undefined>>,
  pid: number,
): number | undefined {
  const usec = Number(env.WATCHDOG_USEC);
  if (!env.WATCHDOG_USEC || !Number.isSafeInteger(usec) || usec <= 0) return undefined;
  if (env.WATCHDOG_PID !== undefined && env.WATCHDOG_PID !== '' && Number(env.WATCHDOG_PID) !== pid) {
    return undefined;
  }
  return Math.max(1, Math.floor(usec / 2000));
}

/** A notifier for NOTIFY_SOCKET, or the inactive one. */
export async function createSystemdNotifier(options: SystemdNotifierOptions): Promise<SystemdNotifier> {
  const env = options.env ?? process.env;
  const path = env.NOTIFY_SOCKET;
  if (!path) return inactive;
  const logger = options.logger.child({ component: 'systemd-notify' });
  if (path.startsWith('@')) {
    logger.warn(
      { socket: path },
      'NOTIFY_SOCKET is an abstract socket, which berth cannot send to; no notifications',
    );
    return inactive;
  }
  let socket: DgramSocketLike;
  try {
    const module = await import('node-unix-socket');
    socket = new module.DgramSocket() as DgramSocketLike;
  } catch (err) {
    logger.warn(
      { err, socket: path },
      'NOTIFY_SOCKET is set but the optional package node-unix-socket cannot be loaded; no notifications (install it, or use Type=simple)',
    );
    return inactive;
  }
  let warned = false;
  socket.on('error', () => {});
  const interval = watchdogIntervalMs(env, options.pid ?? process.pid);
  let closed = false;
  return {
    active: true,
    watchdogIntervalMs: interval,
    notify(fields) {
      if (closed) return;
      const text = Object.entries(fields)
        .map(([key, value]) => `${key}=${value.replace(/\n/g, ' ')}`)
        .join('\n');
      const data = Buffer.from(text);
      try {
        socket.sendTo(data, 0, data.length, path, (err) => {
          if (err && !warned) {
            warned = true;
            logger.warn({ err, socket: path }, 'cannot notify systemd; later failures are not logged');
          }
        });
      } catch (err) {
        if (!warned) {
          warned = true;
          logger.warn({ err, socket: path }, 'cannot notify systemd; later failures are not logged');
        }
      }
    },
    close() {
      if (closed) return;
      closed = true;
      socket.close();
    },
  };
}
