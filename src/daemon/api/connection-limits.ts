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
  server.on('connection', (socket: Socket) => {
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
  });
}
