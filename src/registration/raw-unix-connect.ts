import { getSystemErrorName } from 'node:util';
import { type PipeBinding, pipeBinding, startPipeConnect } from './pipe-binding.js';

/**
 * One connect() to a unix socket through node's own pipe binding, closed at
 * once: the errno as node names it ('ECONNREFUSED', 'ENOENT', …), or
 * undefined when it connected (or gave no answer within `timeoutMs`).
 *
 * Why not `net.connect`: a refused `net.connect` builds a Socket (a Duplex
 * stream and its states) and an Error with a captured stack, about 35 µs of
 * CPU, where the connect itself is 6-7 µs this way. A storm's young sockets
 * (servers between bind() and listen(), and stale files) are probed hundreds
 * of times a second, and the probe's cost is what bounds how often a crowd
 * of them can be asked (executor/young-socket.ts).
 *
 * The binding is node's internal `pipe_wrap` (pipe-binding.ts). If it is not
 * there or not of the shape used here (another node, the permission model),
 * `rawUnixConnect` is undefined and callers use `net.connect`.
 */
export type RawUnixConnect = (socketPath: string, timeoutMs?: number) => Promise<string | undefined>;

function rawConnectWith(binding: PipeBinding): RawUnixConnect {
  return (socketPath, timeoutMs) => {
    // Started outside the promise so that a binding of another shape throws to the caller.
    const { handle, request, status } = startPipeConnect(binding, socketPath);
    return new Promise((resolve) => {
      let settled = false;
      let timer: NodeJS.Timeout | undefined;
      const done = (result: string | undefined) => {
        if (settled) return;
        settled = true;
        if (timer !== undefined) clearTimeout(timer);
        handle.close(); // a connect still pending completes as cancelled, after this
        resolve(result);
      };
      if (status !== 0) {
        done(getSystemErrorName(status));
        return;
      }
      request.oncomplete = (result) => done(result === 0 ? undefined : getSystemErrorName(result));
      if (timeoutMs !== undefined) timer = setTimeout(() => done(undefined), timeoutMs);
    });
  };
}

const binding = pipeBinding;

/**
 * The raw connect, or undefined where node's pipe binding is not available
 * (use `net.connect`). It throws, synchronously, only if the binding's
 * methods are not what they were here: the caller then stops using it.
 */
export const rawUnixConnect: RawUnixConnect | undefined =
  binding === undefined ? undefined : rawConnectWith(binding);
