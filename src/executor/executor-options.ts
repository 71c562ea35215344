import type { BackoffPolicy } from '../common/index.js';

/** Deadlines of one register attempt (kubelet: 10 s dial, 1 s GetInfo, 5 s Notify; berth: GetInfo 5 s, below). */
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

/**
 * The executor's defaults, in one place (the daemon's config schema imports them).
 *
 * GetInfo gets 5 s (the kubelet's deadline for Notify), not the kubelet's 1 s
 * (kubernetes/kubernetes#127457: "1 second ... flakes are easy to imagine"). A
 * call past its deadline is asked again on a fresh connection, and a plugin
 * starved of CPU (a node booting, a storm of registrations) then answers a
 * call nobody waits for and is asked again while still starved. In three
 * storms of 5,000 Go plugins with 500 stale files on two cores, 83 calls
 * failed at a 1 s deadline (133 in another run); with 5 s none did, and 388 were answered after
 * more than 1 s, the slowest after 2.99 s (bench/results.md). On a unix
 * socket a plugin that died closes the connection, which fails the call at
 * once: only a stopped, hung or starved plugin reaches this deadline, and a
 * plugin that answers within 1 s sees no difference. `timeouts.getInfo: 1s`
 * restores the kubelet's.
 */
export const DEFAULT_EXECUTOR_TIMEOUTS: Readonly<ExecutorTimeouts> = Object.freeze({
  dialMs: 10_000,
  getInfoMs: 5_000,
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
 * bound. Fewer make shorter event-loop turns in a storm (the replies to the
 * handshakes in flight are read in one poll phase): 16 slots of 125 ms cut a
 * storm of 5,000's event-loop p99 from a median of about 70 ms to about 51 on
 * a slow VM (bench/results.md, issue 20). Not kept: a wave of 1,000 stale
 * files' retries, each holding a slot for its probe, then drains through 16
 * slots in four times the event-loop turns, and the hostile suite's
 * 1,000-stale case went over its bound for the good plugins' latency in a
 * side-by-side run. A stale file's retry now probes before it takes a slot
 * (probeBeforeSlot), and 16 slots still lost: the 1,000 stale files' first
 * dials drain through them too, and beside two busy loops the good plugins'
 * p50 in that case was 374, 326, 155 and 133 ms at 16 against 161, 172, 134
 * and 135 at 64 (307-343 at 16 before the gate). So 64.
 */
export const DEFAULT_MAX_CONCURRENT_REGISTRATIONS = 64;

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
 * A quiet handshake takes a few milliseconds (1.1 s for 5,000 plugins over 64
 * slots is about 15 ms each), so 500 ms only bites on a plugin that stalls;
 * it also caps how long a wave of 64 stalling plugins can delay a fresh one.
 */
export const DEFAULT_SLOT_BUDGETS: Readonly<SlotBudgets> = Object.freeze({
  handshakeMs: 500,
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
