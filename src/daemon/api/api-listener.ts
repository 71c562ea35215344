import { chmodSync, lstatSync, unlinkSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { connect } from 'node:net';
import { BerthError, type Clock, errorMessage } from '../../common/index.js';
import { UNIX_SOCKET_PATH_MAX_BYTES } from '../../unix-grpc/unix-grpc-options.js';
import { formatHostPort, type TcpAddress } from '../config/listen-address.js';
import type { RequestHandler } from './api-server.js';
import { applyConnectionLimits, type ConnectionLimits } from './connection-limits.js';

/** Resolves true when something accepts connections on the unix socket. */
function answers(socketPath: string): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = connect(socketPath);
    probe.once('connect', () => {
      probe.destroy();
      resolve(true);
    });
    probe.once('error', () => resolve(false));
  });
}

/**
 * Makes the API socket path usable: a stale socket left by a crashed daemon
 * is removed; a live one (another daemon on the same data directory) or a
 * non-socket file is refused with a message saying what to do.
 */
export async function claimApiSocket(socketPath: string): Promise<void> {
  let isSocket: boolean;
  try {
    isSocket = lstatSync(socketPath).isSocket();
  } catch {
    return; // nothing there
  }
  if (!isSocket) {
    throw new BerthError(
      'BERTH_INVALID_ARGUMENT',
      `${socketPath} exists and is not a socket; move it away or choose another --data-dir`,
    );
  }
  if (await answers(socketPath)) {
    throw new BerthError(
      'BERTH_DAEMON_RUNNING',
      `another berth daemon is already serving ${socketPath}; stop it first or start this one with a different --data-dir`,
    );
  }
  unlinkSync(socketPath);
}

function listen(server: Server, target: string | TcpAddress, what: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const onError = (err: Error) =>
      reject(
        new BerthError('BERTH_INVALID_ARGUMENT', `cannot serve the API on ${what}: ${errorMessage(err)}`, {
          cause: err,
        }),
      );
    server.once('error', onError);
    const done = () => {
      server.off('error', onError);
      resolve();
    };
    if (typeof target === 'string') server.listen(target, done);
    else server.listen(target.port, target.host, done);
  });
}

/** Header and request deadlines are checked this often (Node's default is 30 s, which would stretch them). */
const SERVER_OPTIONS = { connectionsCheckingInterval: 1000 } as const;

export { UNIX_SOCKET_PATH_MAX_BYTES };

/**
 * Serves the handler on a unix socket readable and writable by the owner only
 * (0600). Between bind and chmod it has the umask's mode, but it lives in the
 * 0700 data directory, which nobody else can enter. (Changing the umask
 * around the bind would change it for the whole process, library users'
 * files included.)
 */
export async function listenUnix(
  handler: RequestHandler,
  socketPath: string,
  limits?: ConnectionLimits,
): Promise<Server> {
  if (Buffer.byteLength(socketPath) > UNIX_SOCKET_PATH_MAX_BYTES) {
    throw new BerthError(
      'BERTH_INVALID_ARGUMENT',
      `the API socket path ${socketPath} is ${Buffer.byteLength(socketPath)} bytes, longer than the unix limit of ${UNIX_SOCKET_PATH_MAX_BYTES}; choose a shorter --data-dir`,
    );
  }
  const server = createServer(SERVER_OPTIONS, handler);
  if (limits) applyConnectionLimits(server, limits);
  await listen(server, socketPath, socketPath);
  chmodSync(socketPath, 0o600);
  return server;
}

export interface TcpListenOptions {
  limits?: ConnectionLimits;
  /** PEM contents: serve HTTPS; with `ca`, ask for client certificates verified against it. */
  tls?: { cert: Buffer; key: Buffer; ca?: Buffer };
}

/** Serves the handler on TCP; the returned address has the real port when 0 was asked for. */
export async function listenTcp(
  handler: RequestHandler,
  address: TcpAddress,
  options: TcpListenOptions = {},
): Promise<{ server: Server; address: TcpAddress }> {
  const { tls } = options;
  // node:https (with node:tls, about 3 ms) is loaded only by a daemon that serves TLS.
  const server: Server = tls
    ? (await import('node:https')).createServer(
        {
          ...SERVER_OPTIONS,
          cert: tls.cert,
          key: tls.key,
          ...(tls.ca === undefined
            ? {}
            : // Certificates are checked per request (tcp-access.ts), so a client
              // without one can still use the token.
              { ca: tls.ca, requestCert: true, rejectUnauthorized: false }),
        },
        handler,
      )
    : createServer(SERVER_OPTIONS, handler);
  if (options.limits) applyConnectionLimits(server, options.limits, tls !== undefined);
  await listen(server, address, formatHostPort(address));
  const bound = server.address();
  const port = typeof bound === 'object' && bound !== null ? bound.port : address.port;
  return { server, address: { host: address.host, port } };
}

/** Stops accepting, lets in-flight requests finish, and cuts what is left after `graceMs`. */
export function closeServer(server: Server, graceMs: number, clock: Clock): Promise<void> {
  return new Promise((resolve) => {
    if (!server.listening) {
      resolve();
      return;
    }
    const timer = clock.setTimeout(() => server.closeAllConnections(), graceMs);
    server.close(() => {
      clock.clearTimeout(timer);
      resolve();
    });
    server.closeIdleConnections();
  });
}
