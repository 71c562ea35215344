import { lstat } from 'node:fs/promises';
import { connect } from 'node:net';
import { setTimeout as delay } from 'node:timers/promises';
import { abortedError, BerthError } from '../common/index.js';
import type { DialRegistration, RegistrationConnection } from '../registration/types.js';
import type { ExecutorTimeouts, YoungSocketRetry } from './executor-options.js';
import type { Slots } from './slots.js';

export interface YoungDialDeps {
  dial: DialRegistration;
  timeouts: ExecutorTimeouts;
  slots?: Slots;
  youngSocketRetry?: YoungSocketRetry | false;
  /**
   * The socket refused the last attempt: try a plain connect first, and fail
   * at once if it still refuses, so a stale file retried out of backoff never
   * holds a slot (1,000 of them would otherwise queue ahead of fresh plugins
   * in the FIFO slots).
   */
  probeFirst?: boolean;
}

/**
 * Dials `socketPath` holding a slot, and returns still holding it (the caller
 * releases it after the attempt). A socket file younger than
 * `youngSocketRetry.ageMs` that refuses the connection is a server between
 * bind() and listen(): it is redialled after short waits instead of failing
 * into the executor's backoff. During a wait the slot is given back, so a
 * refusing socket never holds up the queue; an old (stale) file fails at once.
 *
 * The age is the file's ctime against the wall clock (file times are wall
 * time, so an injected test clock does not apply here).
 */
export async function dialYoungSocket(
  deps: YoungDialDeps,
  socketPath: string,
  signal: AbortSignal,
): Promise<RegistrationConnection> {
  const young = deps.youngSocketRetry;
  let retry = 0;
  // Probe first on a retry after a refusal, so a stale file never waits for a
  // slot. A first attempt dials at once: the dial's connect is itself the
  // probe (a refusal costs one connect and no HTTP/2 session, dial.ts), and an
  // extra connect per plugin was a third of the connects in a storm.
  let probeFirst = deps.probeFirst === true;
  for (;;) {
    let failure: unknown;
    if (probeFirst) {
      probeFirst = false;
      failure = await refusal(socketPath);
    }
    if (failure === undefined) {
      await deps.slots?.acquire(signal);
      try {
        return await deps.dial(socketPath, { timeoutMs: deps.timeouts.dialMs, signal });
      } catch (err) {
        deps.slots?.release();
        failure = err;
      }
    }
    if (young === undefined || young === false || signal.aborted || !isConnectionRefused(failure))
      throw failure;
    const bornAt = await socketBornAt(socketPath);
    const isYoung = () => bornAt !== undefined && Date.now() - bornAt < young.ageMs;
    if (!isYoung()) throw failure;
    // While it still refuses, a retry is one plain connect(): no HTTP/2 session, no slot.
    for (;;) {
      const wait = young.delaysMs[retry++];
      if (wait === undefined) throw failure;
      await delay(wait, undefined, { signal }).catch(() => {});
      if (signal.aborted) throw abortedError(signal, `dial ${socketPath}`);
      if (!(await refuses(socketPath))) break; // listening now (or gone): dial for real
      if (!isYoung()) throw failure;
    }
  }
}

/**
 * A plain connect(): a dial error (the words dial.ts uses) when it is refused
 * right now, undefined when it connects, fails otherwise or does not answer
 * within a second (the real dial then decides).
 */
function refusal(socketPath: string): Promise<BerthError | undefined> {
  return new Promise((resolve) => {
    const socket = connect({ path: socketPath });
    const done = (result: BerthError | undefined) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(result);
    };
    const timer = setTimeout(() => done(undefined), 1000);
    socket.once('connect', () => done(undefined));
    socket.once('error', (err: NodeJS.ErrnoException) => {
      done(
        err.code === 'ECONNREFUSED'
          ? new BerthError(
              'BERTH_DIAL_FAILED',
              `cannot connect to plugin socket ${socketPath}: connection refused (ECONNREFUSED): no process is listening on the socket`,
              { cause: err },
            )
          : undefined,
      );
    });
  });
}

/** True when a plain connect() to the socket is refused right now. */
function refuses(socketPath: string): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ path: socketPath });
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', (err: NodeJS.ErrnoException) => {
      socket.destroy();
      resolve(err.code === 'ECONNREFUSED');
    });
  });
}

/** The socket file's ctime (wall clock ms): when it was bound. */
async function socketBornAt(socketPath: string): Promise<number | undefined> {
  try {
    return (await lstat(socketPath)).ctimeMs;
  } catch {
    return undefined;
  }
}

/** True when `err` or one of its causes is a refused connect. */
export function isConnectionRefused(err: unknown): boolean {
  let current: unknown = err;
  for (let depth = 0; depth < 8 && current instanceof Error; depth++) {
    if ((current as NodeJS.ErrnoException).code === 'ECONNREFUSED') return true;
    const details = (current as { details?: { errno?: unknown } }).details;
    if (details?.errno === 'ECONNREFUSED') return true;
    current = current.cause;
  }
  return false;
}
