import { performance } from 'node:perf_hooks';

/**
 * A bound on how long one burst of work holds the event loop. A storm hands
 * berth a thousand sockets in one inotify read, and each step of their
 * pipeline (inspect, reconcile, start the attempt) is cheap on its own but
 * not a thousand times in one turn: the event loop's p99 is a goal (issue 20).
 * Work loops ask `spent()` between items and, when it says so, continue in a
 * later turn (setImmediate), letting I/O callbacks, timers and the API in.
 *
 * Real time on purpose, not an injected Clock: this bounds CPU time held, not
 * a schedule.
 */
export class TimeSlice {
  readonly #ms: number;
  #start = performance.now();

  constructor(ms: number) {
    this.#ms = ms;
  }

  /** A new slice starts now (a loop's first item, or after yielding). */
  begin(): void {
    this.#start = performance.now();
  }

  /** The slice's time is up: yield before the next item. */
  spent(): boolean {
    return performance.now() - this.#start >= this.#ms;
  }
}

/** Resolves in a later event-loop turn, after pending I/O callbacks. */
export function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/** How long one burst may hold the event loop before it yields (ms); a fifth of the p99 goal of 20 ms. */
export const WORK_SLICE_MS = 4;
