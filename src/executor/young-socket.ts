import { lstat } from 'node:fs/promises';
import { setTimeout as delay } from 'node:timers/promises';
import type { DialRegistration, RegistrationConnection } from '../registration/types.js';
import type { ExecutorTimeouts, YoungSocketRetry } from './executor-options.js';
import type { Slots } from './slots.js';

export interface YoungDialDeps {
  dial: DialRegistration;
  timeouts: ExecutorTimeouts;
  slots?: Slots;
  youngSocketRetry?: YoungSocketRetry | false;
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
  for (let retry = 0; ; retry++) {
    await deps.slots?.acquire(signal);
    try {
      return await deps.dial(socketPath, { timeoutMs: deps.timeouts.dialMs, signal });
    } catch (err) {
      deps.slots?.release();
      const wait = young === false || young === undefined ? undefined : young.delaysMs[retry];
      if (wait === undefined || signal.aborted || !isConnectionRefused(err)) throw err;
      if (!(await isYoung(socketPath, young as YoungSocketRetry))) throw err;
      await delay(wait, undefined, { signal }).catch(() => {});
      if (signal.aborted) throw err;
    }
  }
}

async function isYoung(socketPath: string, young: YoungSocketRetry): Promise<boolean> {
  try {
    const stats = await lstat(socketPath);
    return Date.now() - stats.ctimeMs < young.ageMs;
  } catch {
    return false;
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
