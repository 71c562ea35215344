import { lstatSync } from 'node:fs';
import { connect } from 'node:net';

/**
 * One plain connect() to a unix socket, closed at once: undefined when it
 * connects (or, with `timeoutMs`, gives no answer in time), else the connect
 * error. Without `timeoutMs` no timer is set: a unix connect answers at once
 * (a full backlog is EAGAIN), and hot loops of probes then cost no timers.
 * No HTTP/2, no gRPC: the cheap way to ask "does anybody listen there now?"
 * (a refused connect is ECONNREFUSED; a missing file ENOENT).
 */
export function probeConnect(
  socketPath: string,
  timeoutMs?: number,
): Promise<NodeJS.ErrnoException | undefined> {
  // A file that is gone needs no socket to say so: when a plugin and its
  // socket go together (1,000 removed at once), this is most probes.
  if (lstatSync(socketPath, { throwIfNoEntry: false }) === undefined) {
    const missing: NodeJS.ErrnoException = new Error(`connect ENOENT ${socketPath}`);
    missing.code = 'ENOENT';
    return Promise.resolve(missing);
  }
  return new Promise((resolve) => {
    const socket = connect({ path: socketPath });
    const done = (result: NodeJS.ErrnoException | undefined) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(result);
    };
    const timer = timeoutMs === undefined ? undefined : setTimeout(() => done(undefined), timeoutMs);
    socket.once('connect', () => done(undefined));
    socket.once('error', (err: NodeJS.ErrnoException) => done(err));
  });
}
