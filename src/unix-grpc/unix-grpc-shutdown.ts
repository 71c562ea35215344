import type { Server } from '@grpc/grpc-js';
import type { UnixGrpcListener } from './unix-grpc-server.js';

/**
 * Stops a gRPC server that `listenUnixGrpc` serves: the listener stops
 * accepting, grpc-js is asked to let the calls running finish (tryShutdown:
 * each session says GOAWAY and closes once its streams have ended), and the
 * stop waits until every connection the listener accepted has closed, or
 * `graceMs`; then what still runs is cancelled (forceShutdown). Resolves once
 * the connections are closed or cancelled.
 *
 * It watches the connections, not tryShutdown's callback, which says nothing
 * reliable on the nodes berth runs on: on node 20 grpc-js never calls it
 * for a session destroyed but not yet closed, and on node 22 and 24 it calls
 * it at once, because node's HTTP/2 server closing marks every session closed
 * while their streams still run. A stop that trusted it there returned with a
 * hanging call still open, and its client waited for good.
 */
export async function shutdownUnixGrpc(
  server: Server | undefined,
  listener: UnixGrpcListener | undefined,
  graceMs: number,
): Promise<void> {
  const drained = listener?.close();
  // A server built on first connection that no connection ever built: nothing to finish.
  if (server === undefined) return;
  server.tryShutdown(() => {});
  if (drained !== undefined) {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([drained, new Promise<void>((resolve) => (timer = setTimeout(resolve, graceMs)))]);
    clearTimeout(timer);
  }
  // Cancels what the grace left running; after a drained stop there is nothing left to cancel.
  server.forceShutdown();
}
