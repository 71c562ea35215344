import { lstatSync } from 'node:fs';
import { abortedError, sleep, systemClock, type TurnBudget } from '../common/index.js';
import { probeConnect, refusedBeforeDial } from '../registration/registrar.js';
import type { DialRegistration, RegistrationConnection } from '../registration/types.js';
import type { ExecutorTimeouts, YoungSocketRetry } from './executor-options.js';
import type { HoldBudget, SlotLease, Slots } from './slots.js';

export interface YoungDialDeps {
  dial: DialRegistration;
  timeouts: ExecutorTimeouts;
  slots?: Slots;
  /** Bounds how long the slot is held (see Slots.lease); unbounded without it. */
  hold?: HoldBudget;
  youngSocketRetry?: YoungSocketRetry | false;
  /** Sockets in their young-socket retries right now, shared by one executor's dials (YoungSocketRetry.dense). */
  retrying?: { count: number };
  /** Shares each event-loop turn among the attempts (TurnBudget): a connect waits for a turn with time. */
  turn?: TurnBudget;
  /** The caller already acquired one of `slots`: the first dial leases that one instead of waiting. */
  acquired?: boolean;
  /** The socket still refused a probe but is young (probeBeforeSlot): a raw connect goes first, and a refusal costs no dial. */
  probeFirst?: boolean;
}

/** A dialled connection and the slot lease it was dialled under (a no-op lease without slots). */
export interface LeasedConnection {
  conn: RegistrationConnection;
  lease: SlotLease;
}

const NO_LEASE: SlotLease = { release() {}, overran: false };

/**
 * Dials `socketPath` and returns holding a slot lease (the caller releases it). The slot is taken before the connect, so at most `slots.size`
 * plugins are connected-and-handshaking at once: with 1,000 sockets present at
 * start, connecting to all of them first made the plugins' side set up 1,000
 * HTTP/2 sessions before the first handshake could finish (and added 6–10 ms to
 * the event loop's p99 in a 5,000 storm). A stale file holds its slot for one
 * refused connect (microseconds) and gives it back at once.
 *
 * A socket file younger than `youngSocketRetry.ageMs` that refuses the
 * connection is a server between bind() and listen(): it is redialled after
 * short waits instead of failing into the executor's backoff, holding no slot
 * while it waits. An old (stale) file fails at once. The age is the file's
 * ctime against the wall clock (file times are wall time, so an injected test
 * clock does not apply here).
 */
/**
 * Redials of refusing young sockets, all together, per millisecond: a crowd
 * of N waits N / this between its probes. A lone plugin in a bind -> listen
 * gap keeps its own schedule. A crowd is a storm's stale files (young too,
 * for a second), or a storm's servers that bind long before they listen: in
 * one storm of 5,000 the Go farm's servers refused 2,321 first dials (none
 * or a few hundred in others). A probe's connect is a raw one
 * (probe-connect.ts, 6-7 µs of CPU against 35 µs for a net.Socket and its
 * Error); with its timer and lstat, a crowd's probe costs about 19 µs where
 * it cost 47, so 1.25 a millisecond cost what 0.5 did: 2.4% of a core while
 * a crowd lasts. A real plugin in a crowd of 700 waits up to 560 ms for its
 * next probe, against 1.4 s at 0.5 (and 4.6 s among that storm's 2,321,
 * which took 5.4 s where its like take 2.7).
 */
const CROWD_PROBES_PER_MS = 1.25;

export async function dialYoungSocket(
  deps: YoungDialDeps,
  socketPath: string,
  signal: AbortSignal,
): Promise<LeasedConnection> {
  const young = deps.youngSocketRetry;
  const { slots } = deps;
  let retry = 0;
  let acquired = slots !== undefined && deps.acquired === true;
  let probeFirst = deps.probeFirst === true;
  for (;;) {
    let lease: SlotLease | undefined;
    let failure: unknown;
    try {
      if (slots === undefined) lease = NO_LEASE;
      else if (acquired) lease = slots.leaseAcquired(deps.hold);
      else lease = await slots.lease(signal, deps.hold);
      acquired = false;
      await deps.turn?.pass();
      if (probeFirst) {
        probeFirst = false;
        const refused = await refusedBeforeDial(socketPath);
        if (refused !== undefined) throw refused;
      }
      // GetInfo, the attempt's next call, goes out with the connection preface (DialOptions).
      const conn = await deps.dial(socketPath, {
        timeoutMs: deps.timeouts.dialMs,
        signal,
        getInfoFirstMs: deps.timeouts.getInfoMs,
      });
      return { conn, lease };
    } catch (err) {
      lease?.release();
      failure = err;
    }
    if (young === undefined || young === false || signal.aborted || !isConnectionRefused(failure))
      throw failure;
    const bornAt = socketBornAt(socketPath);
    const isYoung = () => youngAt(bornAt, young.ageMs);
    if (!isYoung()) throw failure;
    // While it still refuses, a retry is one plain connect(): no HTTP/2 session, no slot.
    const retrying = deps.retrying ?? { count: 0 };
    const refusedAt = Date.now();
    const denseUntil = refusedAt + (young.dense?.forMs ?? 0);
    retrying.count += 1;
    try {
      for (;;) {
        const dense =
          young.dense !== undefined && Date.now() < denseUntil && retrying.count <= young.dense.whileAtMost;
        const scheduled = dense ? young.dense?.stepMs : young.delaysMs[retry++];
        if (scheduled === undefined) throw failure;
        // Whole milliseconds: node keeps one timer list per distinct duration, and a crowd's
        // fractional waits each made a list of their own.
        const wait = Math.ceil(Math.max(scheduled, retrying.count / CROWD_PROBES_PER_MS));
        await sleep(systemClock, wait, signal).catch(() => {});
        if (signal.aborted) throw abortedError(signal, `dial ${socketPath}`);
        const refusal = await probeConnect(socketPath);
        if (refusal?.code !== 'ECONNREFUSED') break; // listening now (or gone): dial for real
        if (!isYoung()) throw failure;
      }
    } finally {
      retrying.count -= 1;
    }
  }
}

/**
 * True when the socket file is young enough that a refusal may be a server
 * between bind() and listen() (its refusals are retried, see dialYoungSocket).
 */
export function isYoungSocket(socketPath: string, young: YoungSocketRetry | false | undefined): boolean {
  if (young === undefined || young === false) return false;
  return youngAt(socketBornAt(socketPath), young.ageMs);
}

/** A file bound at `bornAt` (wall clock ms) is younger than `ageMs` now. */
function youngAt(bornAt: number | undefined, ageMs: number): boolean {
  return bornAt !== undefined && Date.now() - bornAt < ageMs;
}

/** The socket file's ctime (wall clock ms): when it was bound. Synchronous for the watcher's reason (inspect-path.ts). */
function socketBornAt(socketPath: string): number | undefined {
  return lstatSync(socketPath, { throwIfNoEntry: false })?.ctimeMs;
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
