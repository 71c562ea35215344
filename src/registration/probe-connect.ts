import { lstatSync } from 'node:fs';
import { connect } from 'node:net';
import { type RawUnixConnect, rawUnixConnect } from './raw-unix-connect.js';

/** Why a probe's connect failed: the errno's name, and node's wording of it ("connect ECONNREFUSED <path>"). */
export interface ConnectProbeFailure {
  code: string;
  message: string;
}

/** Node's pipe binding while it behaves as expected; undefined after it once did not (raw-unix-connect.ts). */
let raw: RawUnixConnect | undefined = rawUnixConnect;

/**
 * One plain connect() to a unix socket, closed at once: undefined when it
 * connects (or, with `timeoutMs`, gives no answer in time), else why not.
 * Without `timeoutMs` no timer is set: a unix connect answers at once (a full
 * backlog is EAGAIN), and hot loops of probes then cost no timers. No HTTP/2,
 * no gRPC, no Socket and no Error object: the cheap way to ask "does anybody
 * listen there now?" (a refused connect is ECONNREFUSED; a missing file ENOENT).
 */
export function probeConnect(
  socketPath: string,
  timeoutMs?: number,
): Promise<ConnectProbeFailure | undefined> {
  // A file that is gone needs no socket to say so: when a plugin and its
  // socket go together (1,000 removed at once), this is most probes.
  if (lstatSync(socketPath, { throwIfNoEntry: false }) === undefined)
    return Promise.resolve(failure('ENOENT', socketPath));
  if (raw !== undefined) {
    try {
      return raw(socketPath, timeoutMs).then((code) =>
        code === undefined ? undefined : failure(code, socketPath),
      );
    } catch {
      raw = undefined; // a node whose pipe binding changed shape: net.connect from now on
    }
  }
  return netProbe(socketPath, timeoutMs);
}

function failure(code: string, socketPath: string): ConnectProbeFailure {
  return { code, message: `connect ${code} ${socketPath}` };
}

/** The same probe through `net.connect` (about five times the CPU of the raw one); exported for its test. */
export function netProbe(
  socketPath: string,
  timeoutMs: number | undefined,
): Promise<ConnectProbeFailure | undefined> {
  return new Promise((resolve) => {
    const socket = connect({ path: socketPath });
    const done = (result: ConnectProbeFailure | undefined) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(result);
    };
    const timer = timeoutMs === undefined ? undefined : setTimeout(() => done(undefined), timeoutMs);
    socket.once('connect', () => done(undefined));
    socket.once('error', (err: NodeJS.ErrnoException) =>
      done({ code: err.code ?? 'EIO', message: err.message }),
    );
  });
}
