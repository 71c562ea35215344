import { performance } from 'node:perf_hooks';
import { Fifo } from './fifo.js';

/** How much of one event-loop turn the plugin manager's work may take (ms); a fifth of the p99 goal of 20 ms. */
export const WORK_SLICE_MS = 4;

/**
 * One event-loop turn's time, shared by the continuations of many concurrent
 * operations. A storm keeps 64 handshakes in flight; their replies arrive
 * together and each one's continuation (decode, validate, register, Notify)
 * runs in the poll phase that read it, so one turn ran dozens of them: 15 to
 * 40 ms turns all through a storm of 1,000, against an event-loop p99 goal of
 * 20 ms (issue 20). An operation calls `pass()` where it resumes after I/O:
 * while the current turn has used less than `ms`, it goes on at once;
 * otherwise it waits, in arrival order, for a later turn.
 *
 * The turn's start is kept by an immediate that runs at the end of each turn
 * while operations pass; it also resumes the waiters, `ms` worth per turn.
 * When nothing passes for a whole turn it stops, so an idle daemon schedules
 * nothing. Real time on purpose, not an injected Clock: this bounds the
 * CPU time a turn holds, not a schedule.
 */
export class TurnBudget {
  readonly #ms: number;
  #turnStart = 0;
  #ticking = false;
  #passed = false;
  readonly #waiters = new Fifo<() => void>();

  constructor(ms: number) {
    this.#ms = ms;
  }

  /** Waiting for a later turn now. */
  get waiting(): number {
    return this.#waiters.size;
  }

  /**
   * True when this turn's time is used up (or operations wait for a later
   * one): a synchronous loop then goes on in a later turn (setImmediate).
   */
  spent(): boolean {
    const now = this.#mark();
    return this.waiting > 0 || now - this.#turnStart >= this.#ms;
  }

  /**
   * Undefined when the caller may go on in this turn; otherwise a promise
   * that resolves in a later one. Callers `await` it either way (awaiting
   * undefined costs one microtask).
   */
  pass(): Promise<void> | undefined {
    const now = this.#mark();
    if (this.waiting === 0 && now - this.#turnStart < this.#ms) return undefined;
    return new Promise<void>((resolve) => this.#waiters.push(resolve));
  }

  /** Notes activity in this turn (the first after a quiet one starts the turn's clock); returns now. */
  #mark(): number {
    const now = performance.now();
    this.#passed = true;
    if (!this.#ticking) {
      this.#ticking = true;
      this.#turnStart = now;
      setImmediate(this.#tick);
    }
    return now;
  }

  readonly #tick = (): void => {
    this.#turnStart = performance.now();
    if (this.waiting > 0) {
      this.#passed = true;
      void this.#resumeWaiters();
    }
    if (this.#passed) {
      this.#passed = false;
      setImmediate(this.#tick);
    } else {
      this.#ticking = false;
    }
  };

  /** Resumes waiters one by one, each running until its next await, while this turn has time (at least one a turn). */
  async #resumeWaiters(): Promise<void> {
    let first = true;
    while (this.waiting > 0 && (first || performance.now() - this.#turnStart < this.#ms)) {
      first = false;
      this.#waiters.shift()?.();
      // Let the resumed operation run its synchronous part before the clock is read again.
      await undefined;
    }
  }
}
