/** Real unix sockets with listeners, and FIFOs, for tests that watch a plugins directory. */
import { execFileSync } from 'node:child_process';
import { createServer, type Server } from 'node:net';

/** A real unix socket with a listener at `path`. Closing it removes the file (Node unlinks on close). */
export interface ServedSocket {
  readonly path: string;
  close(): Promise<void>;
}

export async function serveSocket(path: string): Promise<ServedSocket> {
  const server: Server = createServer((conn) => conn.destroy());
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(path, () => {
      server.off('error', reject);
      resolve();
    });
  });
  let closed: Promise<void> | undefined;
  return {
    path,
    close() {
      closed ??= new Promise<void>((resolve) => server.close(() => resolve()));
      return closed;
    },
  };
}

/** Tracks served sockets so a test can close all of them in one cleanup. */
export class SocketPool {
  readonly #sockets = new Set<ServedSocket>();

  async serve(path: string): Promise<ServedSocket> {
    const socket = await serveSocket(path);
    this.#sockets.add(socket);
    return socket;
  }

  async closeAll(): Promise<void> {
    await Promise.all([...this.#sockets].map((socket) => socket.close()));
    this.#sockets.clear();
  }
}

export function mkfifo(path: string): void {
  execFileSync('mkfifo', [path]);
}
