import type { BackoffPolicy } from '../common/index.js';

/** Deadlines of one register attempt (kubelet: 10 s dial, 1 s GetInfo, 5 s Notify). */
export interface ExecutorTimeouts {
  dialMs: number;
  getInfoMs: number;
  notifyMs: number;
}

/**
 * How a socket whose listener is about to exist is retried. C-core gRPC,
 * grpc-js and Go all bind() before they listen(), so a socket file younger
 * than `ageMs` that refuses the connection is most likely a server between
 * the two calls: it is redialled after each of `delaysMs` (while still young)
 * inside the same attempt, instead of entering the 500 ms → 122 s backoff.
 * The dial slot is given back while waiting, so such a socket delays nobody.
 */
export interface YoungSocketRetry {
  /** A socket file (by its ctime) younger than this counts as "about to listen". */
  ageMs: number;
  /** Waits between redials; the attempt fails normally once the list or the age runs out. */
  delaysMs: readonly number[];
  /**
   * While at most `whileAtMost` sockets are in these retries, the first
   * `forMs` after a refusal are polled every `stepMs` before `delaysMs`
   * begins: a lone plugin's bind → listen gap then costs it about a
   * millisecond, while a crowd of young stale files (1,000 appearing at once)
   * keeps the sparse, cheap schedule.
   */
  dense?: { forMs: number; stepMs: number; whileAtMost: number };
}

/** The executor's defaults, in one place (the daemon's config schema imports them). */
export const DEFAULT_EXECUTOR_TIMEOUTS: Readonly<ExecutorTimeouts> = Object.freeze({
  dialMs: 10_000,
  getInfoMs: 1_000,
  notifyMs: 5_000,
});

/** The kubelet's goroutinemap backoff: 500 ms doubling to 2m2s. */
export const DEFAULT_EXECUTOR_BACKOFF: Readonly<BackoffPolicy> = Object.freeze({
  initialMs: 500,
  maxMs: 2 * 60_000 + 2_000,
  factor: 2,
});

/**
 * Dials and handshakes in flight at once; a storm queues (FIFO) behind this
 * bound. It sets how long the event loop's turns get in a storm: replies to
 * the handshakes in flight arrive together, and their reads, frame parsing
 * and continuations run in one poll phase, which no turn budget can split.
 * Measured against the Go farm on a slow VM (bench/results.md, issue 20),
 * event-loop p99 in a storm of 5,000 with a 500 ms budget: 53-79 ms at 64,
 * 49-50 at 32, 34-37 at 16; at 16 with the 125 ms budget below, 32-62 (median
 * about 50: more handshakes overrun it in a storm and go on without a slot).
 * The storm's time and CPU stayed the same; a start with 1,000 present is
 * about a tenth slower. The budget shrank with the slots so that a crowd of
 * stalling plugins drains from the main lane as fast as it did with 64.
 */
export const DEFAULT_MAX_CONCURRENT_REGISTRATIONS = 16;

/**
 * How long a registration may hold its slots, and the lane for sockets that
 * overran (see register-operation.ts). A plugin's own deadlines (dial,
 * GetInfo, Notify, the handler's calls) are the kubelet's and stay whole; the
 * budgets only bound how long one attempt keeps others waiting. An attempt
 * past its budget gives its slot back and carries on without one.
 */
export interface SlotBudgets {
  /** The handshake (connect, HTTP/2, GetInfo, validation) in one of the `maxConcurrentRegistrations` slots. */
  handshakeMs: number;
  /** The handler's calls and the final Notify, in one of `handlerSlots` slots of the plugin's type. */
  handlerMs: number;
  /** Slots per plugin type for the handler's calls (CSI NodeGetInfo, device-plugin options, DRA connect). */
  handlerSlots: number;
  /** Slots of the slow lane: a socket whose last attempt overran a budget runs its next attempt there. */
  slowSlots: number;
  /** How long a slow-lane attempt may hold its slot (the whole attempt). */
  slowMs: number;
}

/**
 * A quiet handshake takes a few milliseconds (a storm of 5,000 over 16 slots
 * in 3.5 s is about 11 ms each, 29 ms on a VM three times slower), so 125 ms
 * only bites on a plugin that stalls. It also sets how fast a crowd of
 * stalling plugins drains from the main lane: 16 slots every 125 ms, 128 a
 * second, as 64 slots every 500 ms did. An attempt past it carries on
 * without its slot, so a slow but honest handshake loses nothing.
 */
export const DEFAULT_SLOT_BUDGETS: Readonly<SlotBudgets> = Object.freeze({
  handshakeMs: 125,
  handlerMs: 500,
  handlerSlots: 64,
  slowSlots: 8,
  slowMs: 1_000,
});

/**
 * Dense at first (a bind -> listen gap is usually a few milliseconds), then
 * sparser: 2, 3, then 5 ms to 50 ms, 10 ms to 150 ms, 25 ms to 250 ms, and
 * 50 ms to about a second. A redial while refusing is one plain connect().
 */
export const DEFAULT_YOUNG_SOCKET_RETRY: Readonly<YoungSocketRetry> = Object.freeze({
  ageMs: 1_000,
  dense: Object.freeze({ forMs: 50, stepMs: 1, whileAtMost: 2 }),
  delaysMs: Object.freeze([
    2,
    3,
    ...Array<number>(9).fill(5),
    ...Array<number>(10).fill(10),
    ...Array<number>(4).fill(25),
    ...Array<number>(16).fill(50),
  ]),
});

export const DEFAULT_EXECUTOR_OPTIONS = Object.freeze({
  timeouts: DEFAULT_EXECUTOR_TIMEOUTS,
  backoff: DEFAULT_EXECUTOR_BACKOFF,
  maxConcurrentRegistrations: DEFAULT_MAX_CONCURRENT_REGISTRATIONS,
  youngSocketRetry: DEFAULT_YOUNG_SOCKET_RETRY,
  slotBudgets: DEFAULT_SLOT_BUDGETS,
});
