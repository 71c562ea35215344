import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import { errorBody } from './http-errors.js';

export interface ConnectionLimits {
  /** Open connections a listener accepts; one more is answered 503 and closed. */
  maxConnections: number;
  /** Time a client has to send its request headers. */
  headersTimeoutMs: number;
  /** A connection with no traffic for this long is closed (event streams send heartbeats). */
  idleTimeoutMs: number;
  /** Called when a connection is refused for the cap. */
  onRefused?: () => void;
  /**
   * TCP only: connections that have not yet sent a request with a valid token
   * (or client certificate) get a cap and an idle timeout of their own. Over
   * that cap the oldest idle one is closed to make room, so idle tokenless
   * clients can neither fill the listener nor lock out /healthz or /readyz.
   */
  unauthenticated?: { maxConnections: number; idleTimeoutMs: number };
  /** Called when an idle unauthenticated connection is closed to make room. */
  onEvicted?: () => void;
}

/** Promotes a connection once a request on it authenticated (set per socket by applyConnectionLimits). */
const promoters = new WeakMap<object, () => void>();

/** Tells the limits that a request on `socket` carried valid credentials: it leaves the unauthenticated pool. */
export function markAuthenticated(socket: object): void {
  promoters.get(socket)?.();
}

const BUSY_BODY = JSON.stringify(
  errorBody(
    'BERTH_TOO_MANY_CLIENTS',
    'berth has reached api.maxConnections open API connections; close idle clients or retry later',
  ),
);
const BUSY_RESPONSE = [
  'HTTP/1.1 503 Service Unavailable',
  'content-type: application/json; charset=utf-8',
  `content-length: ${Buffer.byteLength(BUSY_BODY)}`,
  'connection: close',
  'retry-after: 1',
  '',
  BUSY_BODY,
].join('\r\n');

/**
 * Bounds what clients can hold on one API listener: a connection cap (so idle
 * sockets cannot use up the file descriptors berth needs to dial plugins), a
 * header deadline (slowloris) and an idle timeout. Over the cap a plain-text
 * listener answers one 503 in berth's error shape and closes; a TLS listener
 * just closes, since nothing can be said before the handshake.
 */
export function applyConnectionLimits(server: Server, limits: ConnectionLimits, tls = false): void {
  server.headersTimeout = limits.headersTimeoutMs;
  // Whole-request deadline (headers and body); event streams are past it once their headers are in.
  server.requestTimeout = 2 * limits.headersTimeoutMs;
  server.keepAliveTimeout = Math.min(5_000, limits.idleTimeoutMs);
  server.setTimeout(limits.idleTimeoutMs, (socket: Socket) => socket.destroy());
  // The server's own connection handling (http, or TLS then http) runs only under the cap.
  const own = server.listeners('connection') as ((socket: Socket) => void)[];
  server.removeAllListeners('connection');
  let open = 0;
  const pool = limits.unauthenticated === undefined ? undefined : unauthenticatedPool(server, limits, tls);
  server.on('connection', (socket: Socket) => {
    // A full listener first makes room by closing an idle tokenless connection, if it has one.
    if (open >= limits.maxConnections && pool?.evictIdle()) limits.onEvicted?.();
    if (open >= limits.maxConnections) {
      limits.onRefused?.();
      socket.on('error', () => {});
      if (tls) socket.destroy();
      else socket.end(BUSY_RESPONSE);
      // A client that never reads holds our buffer for a second at most.
      socket.setTimeout(1000, () => socket.destroy());
      return;
    }
    open += 1;
    socket.once('close', () => {
      open -= 1;
    });
    for (const listener of own) listener.call(server, socket);
    // After the server's own set-up, so the pool's shorter timeout replaces the server's.
    if (!tls) pool?.admit(socket);
  });
}

/**
 * The unauthenticated connections of a TCP listener, oldest first. Tracked
 * on the socket the requests arrive on (after the TLS handshake for HTTPS).
 */
function unauthenticatedPool(
  server: Server,
  limits: ConnectionLimits,
  tls: boolean,
): { evictIdle(): boolean; admit(socket: Socket): void } {
  const { maxConnections, idleTimeoutMs } = limits.unauthenticated as NonNullable<
    ConnectionLimits['unauthenticated']
  >;
  const pool = new Set<Socket>();
  const inFlight = new WeakMap<Socket, number>();
  const evictIdle = (): boolean => {
    for (const socket of pool) {
      if ((inFlight.get(socket) ?? 0) > 0) continue;
      pool.delete(socket);
      socket.destroy();
      return true;
    }
    return false;
  };
  server.on('request', (req, res) => {
    const socket = req.socket;
    inFlight.set(socket, (inFlight.get(socket) ?? 0) + 1);
    res.once('close', () => inFlight.set(socket, (inFlight.get(socket) ?? 1) - 1));
  });
  const admit = (socket: Socket) => {
    if (socket.destroyed) return;
    if (pool.size >= maxConnections && evictIdle()) limits.onEvicted?.();
    pool.add(socket);
    socket.setTimeout(idleTimeoutMs);
    socket.once('close', () => {
      pool.delete(socket);
      promoters.delete(socket);
    });
    promoters.set(socket, () => {
      if (!pool.delete(socket)) return;
      promoters.delete(socket);
      socket.setTimeout(limits.idleTimeoutMs);
    });
  };
  // HTTPS: requests arrive on the TLS socket; the server's own listener for it is already registered.
  if (tls) server.on('secureConnection', admit);
  return { evictIdle, admit };
}
