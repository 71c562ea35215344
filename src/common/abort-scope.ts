/**
 * Per-operation AbortSignals under one long-lived one, without a listener per
 * operation on the long-lived signal.
 *
 * Handing a component's lifetime signal to every call it makes adds one
 * 'abort' listener per call in flight: 70 CSI drivers hanging in NodeGetInfo
 * put 280 listeners on the CSI handler's signal, and Node warned
 * (MaxListenersExceededWarning) on every daemon that had more than 10 calls or
 * watches in flight at once. A scope holds the operations' controllers in a
 * set instead: the long-lived signal (if any) gets one listener for the
 * scope's whole life, each operation gets a signal of its own (with the few
 * listeners its own calls add), and `close()` takes the operation out again.
 */
export interface ScopedSignal {
  readonly signal: AbortSignal;
  /** Ends the operation's membership; idempotent. Does not abort its signal. */
  close(): void;
}

export class AbortScope {
  readonly #open = new Set<AbortController>();
  readonly #own = new AbortController();

  /** With `parent`, the scope aborts when it does (one listener, for the scope's life). */
  constructor(parent?: AbortSignal) {
    if (parent === undefined) return;
    if (parent.aborted) this.abort(parent.reason);
    else parent.addEventListener('abort', () => this.abort(parent.reason), { once: true });
  }

  /** Aborted once the scope is. */
  get signal(): AbortSignal {
    return this.#own.signal;
  }

  get aborted(): boolean {
    return this.#own.signal.aborted;
  }

  /** Operations open now. */
  get size(): number {
    return this.#open.size;
  }

  /** A signal for one operation: aborted when the scope is (at once if it already was). */
  open(): ScopedSignal {
    const controller = new AbortController();
    if (this.aborted) {
      controller.abort(this.#own.signal.reason);
      return { signal: controller.signal, close() {} };
    }
    this.#open.add(controller);
    return { signal: controller.signal, close: () => void this.#open.delete(controller) };
  }

  /** Runs `operation` with a signal of its own and closes it after. */
  async run<T>(operation: (signal: AbortSignal) => Promise<T>): Promise<T> {
    const scoped = this.open();
    try {
      return await operation(scoped.signal);
    } finally {
      scoped.close();
    }
  }

  abort(reason?: unknown): void {
    if (this.aborted) return;
    this.#own.abort(reason);
    const open = [...this.#open];
    this.#open.clear();
    for (const controller of open) controller.abort(this.#own.signal.reason);
  }
}
