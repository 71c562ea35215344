import { abortedError, type Clock, type ClockTimer, Fifo, whenAborted } from '../common/index.js';

/** How long one holder may keep its slot before it is taken back (the holder carries on without it). */
export interface HoldBudget {
  clock: Clock;
  ms: number;
  /** Called once if the budget runs out before the holder released. */
  onOverrun?: () => void;
}

/** One held slot. `release()` is idempotent; after an overrun it does nothing. */
export interface SlotLease {
  release(): void;
  /** True once the hold budget ran out and the slot went back to the queue. */
  readonly overran: boolean;
}

/**
 * A counting semaphore with a FIFO queue: at most `size` holders at once, and
 * waiters are served in arrival order, so a storm of sockets queues fairly
 * instead of thrashing. Acquire and release are O(1).
 */
export class Slots {
  readonly size: number;
  #held = 0;
  readonly #queue = new Fifo<Waiter>();

  constructor(size: number) {
    this.size = size;
  }

  get held(): number {
    return this.#held;
  }

  /** Waiters queued (an aborted one counts until release() skips it). */
  get waiting(): number {
    return this.#queue.size;
  }

  /** Resolves once a slot is held; rejects (holding nothing) when `signal` aborts first. */
  acquire(signal?: AbortSignal): Promise<void> {
    if (signal?.aborted) return Promise.reject(abortedError(signal, 'waiting for a dial slot'));
    if (this.#held < this.size) {
      this.#held += 1;
      return Promise.resolve();
    }
    return new Promise<void>((resolve, reject) => {
      const waiter: Waiter = {
        cancelled: false,
        grant: () => {
          offAbort();
          resolve();
        },
      };
      const onAbort = () => {
        // Left in the queue as a hole; release() skips it.
        waiter.cancelled = true;
        reject(abortedError(signal, 'waiting for a dial slot'));
      };
      this.#queue.push(waiter);
      const offAbort = whenAborted(signal, onAbort);
    });
  }

  /**
   * Like acquire(), but resolves with a lease. With a `budget`, the slot is
   * taken back after `budget.ms` even if the holder has not finished: the
   * holder goes on without it (its own deadlines still bound it), and the next
   * waiter is served. So no holder can keep a slot longer than its budget,
   * whatever the plugin on the other end does.
   */
  async lease(signal?: AbortSignal, budget?: HoldBudget): Promise<SlotLease> {
    await this.acquire(signal);
    return this.leaseAcquired(budget);
  }

  /**
   * The lease of a slot the caller already holds (its acquire() resolved):
   * a registration attempt waits for its handshake slot before it builds
   * any state of its own (operation-executor.ts), then leases that slot.
   */
  leaseAcquired(budget?: HoldBudget): SlotLease {
    let held = true;
    let overran = false;
    let timer: ClockTimer | undefined;
    const giveBack = () => {
      if (!held) return false;
      held = false;
      if (timer !== undefined) budget?.clock.clearTimeout(timer);
      this.release();
      return true;
    };
    if (budget !== undefined) {
      timer = budget.clock.setTimeout(() => {
        timer = undefined;
        if (!giveBack()) return;
        overran = true;
        budget.onOverrun?.();
      }, budget.ms);
    }
    return {
      release: () => void giveBack(),
      get overran() {
        return overran;
      },
    };
  }

  release(): void {
    for (let next = this.#queue.shift(); next !== undefined; next = this.#queue.shift()) {
      if (!next.cancelled) {
        next.grant(); // the slot passes straight to the next waiter
        return;
      }
    }
    this.#held -= 1;
  }
}

interface Waiter {
  cancelled: boolean;
  grant: () => void;
}
