import type { Clock, ClockTimer } from '../common/index.js';

class FakeTimer implements ClockTimer {
  readonly __clockTimer = true as const;
  constructor(
    readonly id: number,
    public due: number,
    readonly callback: () => void,
  ) {}
}

/**
 * A Clock whose time moves only when a test calls `advance` or `set`.
 * Timers fire in due order; between timers the microtask and immediate
 * queues are drained, so async code reacting to a timer runs before the next.
 */
export class FakeClock implements Clock {
  #now: number;
  #nextId = 1;
  readonly #timers = new Map<number, FakeTimer>();
  readonly #timerWaiters: Array<{ count: number; resolve: () => void }> = [];

  constructor(start = Date.UTC(2026, 0, 1)) {
    this.#now = start;
  }

  now(): number {
    return this.#now;
  }

  setTimeout(callback: () => void, ms: number): ClockTimer {
    const timer = new FakeTimer(this.#nextId++, this.#now + Math.max(0, ms), callback);
    this.#timers.set(timer.id, timer);
    this.#notifyWaiters();
    return timer;
  }

  clearTimeout(timer: ClockTimer): void {
    if (timer instanceof FakeTimer) this.#timers.delete(timer.id);
  }

  /** Number of timers armed and not yet fired or cleared. */
  get pendingTimers(): number {
    return this.#timers.size;
  }

  /** Milliseconds until the earliest armed timer is due; undefined when none is armed. */
  nextTimerIn(): number | undefined {
    const next = this.#earliest();
    return next === undefined ? undefined : next.due - this.#now;
  }

  /** Resolves once at least `count` timers are armed (code under test arms them asynchronously). */
  waitForTimers(count = 1): Promise<void> {
    if (this.#timers.size >= count) return Promise.resolve();
    return new Promise((resolve) => this.#timerWaiters.push({ count, resolve }));
  }

  /** Moves time forward by `ms`, firing every timer that falls due, in order. */
  async advance(ms: number): Promise<void> {
    const target = this.#now + ms;
    while (true) {
      const next = this.#earliest();
      if (next === undefined || next.due > target) break;
      this.#timers.delete(next.id);
      this.#now = Math.max(this.#now, next.due);
      next.callback();
      await settle();
    }
    this.#now = target;
    await settle();
  }

  /** Jumps to an absolute time (not backwards), firing due timers. */
  async set(time: number): Promise<void> {
    await this.advance(Math.max(0, time - this.#now));
  }

  #earliest(): FakeTimer | undefined {
    let best: FakeTimer | undefined;
    for (const t of this.#timers.values()) {
      if (best === undefined || t.due < best.due || (t.due === best.due && t.id < best.id)) best = t;
    }
    return best;
  }

  #notifyWaiters(): void {
    for (let i = this.#timerWaiters.length - 1; i >= 0; i--) {
      const w = this.#timerWaiters[i];
      if (w && this.#timers.size >= w.count) {
        this.#timerWaiters.splice(i, 1);
        w.resolve();
      }
    }
  }
}

/** Lets pending promise callbacks and immediates run. */
export function settle(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
