/**
 * A client connection as grpc-js sees it: bytes from the client go through
 * the H2RequestRewriter, bytes to the client go straight to the socket.
 * Backpressure is kept both ways (the socket pauses while grpc-js has not
 * read what it got). Bytes the rewriter cannot follow end the connection.
 */
import type { Socket } from 'node:net';
import { Duplex } from 'node:stream';
import { H2RequestRewriter } from './h2-request-rewriter.js';

export function authorityFixingConnection(
  socket: Socket,
  options: { maxHeaderBlockBytes?: number; onRefused?: (err: Error) => void } = {},
): Duplex {
  const rewriter = new H2RequestRewriter(options);
  const connection = new Duplex({
    read() {
      socket.resume();
    },
    write(chunk: Buffer, _encoding, callback) {
      socket.write(chunk, callback);
    },
    final(callback) {
      socket.end();
      callback();
    },
    destroy(err, callback) {
      socket.destroy();
      callback(err);
    },
  });
  socket.on('data', (chunk: Buffer) => {
    let out: Buffer[];
    try {
      out = rewriter.push(chunk);
    } catch (err) {
      options.onRefused?.(err as Error);
      socket.destroy();
      connection.destroy();
      return;
    }
    let more = true;
    for (const part of out) more = connection.push(part) && more;
    if (!more) socket.pause();
  });
  socket.on('end', () => connection.push(null));
  socket.on('error', (err) => connection.destroy(err));
  socket.on('close', () => connection.destroy());
  return connection;
}
