/**
 * The one way berth serves gRPC on a unix socket. grpc-js's own
 * `bindAsync('unix:…')` hands each connection straight to Node's HTTP/2
 * server, which refuses the `:authority` grpc-go sends there (the socket
 * path) and a missing one. Here berth owns the listening socket and hands
 * grpc-js each connection through the authority fix
 * (`server.createConnectionInjector`), so every client that exists gets
 * through: grpc-go (the path), grpc-js and grpcio (`localhost`), and clients
 * that send none. `test/structure-guards.test.ts` fails if a server binds a
 * unix socket any other way.
 *
 * A server may also be given as a function that builds it: the socket then
 * listens at once and grpc-js is loaded with the first connection, so a
 * socket that must be served from the start (the device plugins' legacy
 * kubelet.sock) costs a daemon start no gRPC (issue 20).
 */
import { createServer, type Server as NetServer, type Socket } from 'node:net';
import type { Server } from '@grpc/grpc-js';
import { loadOnce } from '../common/index.js';
import { authorityFixingConnection } from './authority-fixing-connection.js';
import type { UnixGrpcOptions } from './unix-grpc-options.js';

export interface UnixGrpcListener {
  readonly socketPath: string;
  /** Connections refused because their bytes were not HTTP/2 we can follow. */
  readonly refused: number;
  /**
   * Stops accepting and removes the socket file (the server's calls go on;
   * stop them with shutdownUnixGrpc).
   * Resolves once the last connection has closed too. Idempotent.
   */
  close(): Promise<void>;
}

export interface ListenUnixGrpcOptions extends UnixGrpcOptions {
  /** Told when a connection is refused or an accept fails (logging). */
  onRefused?: (err: Error) => void;
}

type ConnectionInjector = ReturnType<Server['createConnectionInjector']>;

/**
 * Serves `server` on the unix socket `socketPath`; resolves once listening.
 * Given a function, the server is built (once) when the first connection
 * arrives; a connection that arrives meanwhile waits for it, and one whose
 * server cannot be built is closed and reported to `onRefused`.
 */
export async function listenUnixGrpc(
  server: Server | (() => Promise<Server>),
  socketPath: string,
  options: ListenUnixGrpcOptions = {},
): Promise<UnixGrpcListener> {
  const injectorOf = loadOnce(async () => {
    const [built, { insecureServerCredentials }] = await Promise.all([
      typeof server === 'function' ? server() : server,
      import('./server-credentials.js'),
    ]);
    return built.createConnectionInjector(insecureServerCredentials());
  });
  let injector: ConnectionInjector | undefined =
    typeof server === 'function' ? undefined : await injectorOf();
  let refused = 0;
  const inject = (to: ConnectionInjector, socket: Socket) =>
    to.injectConnection(
      authorityFixingConnection(socket, {
        ...(options.maxHeaderBlockBytes === undefined
          ? {}
          : { maxHeaderBlockBytes: options.maxHeaderBlockBytes }),
        onRefused: (err) => {
          refused += 1;
          options.onRefused?.(err);
        },
      }),
    );
  const listener: NetServer = createServer((socket) => {
    if (injector !== undefined) {
      inject(injector, socket);
      return;
    }
    // The bytes the client sends meanwhile wait in the socket (nothing reads it yet).
    injectorOf().then(
      (ready) => {
        injector = ready;
        inject(ready, socket);
      },
      (err: unknown) => {
        refused += 1;
        socket.destroy();
        options.onRefused?.(err instanceof Error ? err : new Error(String(err)));
      },
    );
  });
  await new Promise<void>((resolve, reject) => {
    listener.once('error', reject);
    listener.listen(socketPath, () => {
      listener.off('error', reject);
      resolve();
    });
  });
  // An accept that fails later (EMFILE) must not crash the process; the listener keeps going.
  listener.on('error', (err) => options.onRefused?.(err));
  let closed: Promise<void> | undefined;
  return {
    socketPath,
    get refused() {
      return refused;
    },
    close() {
      closed ??= new Promise<void>((resolve) => {
        listener.close(() => resolve());
      });
      return closed;
    },
  };
}
