import { BerthError } from './errors.js';

/**
 * A single-consumer async queue: producers push without ever waiting, the
 * consumer iterates with `for await`. Every subscriber in berth gets its own
 * queue, so a slow consumer can never block a producer or another consumer.
 *
 * Bounded queues never drop silently: when `maxSize` is reached the consumer
 * is told. With `lagItem`, the oldest pending items are discarded and a
 * marker built by `lagItem(dropped)` is delivered in their place; without
 * it, the stream ends with a BERTH_SUBSCRIBER_LAGGED error.
 */
export interface AsyncQueueOptions<T> {
  /** Most items held before the overflow policy applies. Default: unbounded. */
  maxSize?: number;
  /** Builds the marker that replaces dropped items. */
  lagItem?: (dropped: number) => T;
  /** Called once when the consumer stops iterating or the queue is closed. */
  onClose?: () => void;
}

export class AsyncQueue<T> implements AsyncIterable<T> {
  readonly #items: T[] = [];
  readonly #maxSize: number;
  readonly #lagItem: ((dropped: number) => T) | undefined;
  readonly #onClose: (() => void) | undefined;
  #dropped = 0;
  #closed = false;
  #failure: Error | undefined;
  #waiter: (() => void) | undefined;

  constructor(options: AsyncQueueOptions<T> = {}) {
    this.#maxSize = options.maxSize ?? Number.POSITIVE_INFINITY;
    this.#lagItem = options.lagItem;
    this.#onClose = options.onClose;
  }

  get closed(): boolean {
    return this.#closed;
  }

  /** Items waiting for the consumer (a lag marker counts once). */
  get size(): number {
    return this.#items.length + (this.#dropped > 0 ? 1 : 0);
  }

  /** Enqueues an item; returns false if the queue is closed. Never blocks. */
  push(item: T): boolean {
    if (this.#closed) return false;
    if (this.#items.length >= this.#maxSize) {
      if (this.#lagItem === undefined) {
        this.close(
          new BerthError(
            'BERTH_SUBSCRIBER_LAGGED',
            `subscriber fell behind by more than ${this.#maxSize} events; re-list and subscribe again`,
          ),
        );
        return false;
      }
      this.#items.shift();
      this.#dropped += 1;
    }
    this.#items.push(item);
    this.#wake();
    return true;
  }

  /** Ends the stream after the pending items; with an error, the consumer gets it after them. */
  close(error?: Error): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#failure = error;
    this.#wake();
    this.#onClose?.();
  }

  async *[Symbol.asyncIterator](): AsyncIterator<T> {
    try {
      while (true) {
        if (this.#dropped > 0 && this.#lagItem !== undefined) {
          const dropped = this.#dropped;
          this.#dropped = 0;
          yield this.#lagItem(dropped);
          continue;
        }
        if (this.#items.length > 0) {
          yield this.#items.shift() as T;
          continue;
        }
        if (this.#closed) {
          if (this.#failure) throw this.#failure;
          return;
        }
        await new Promise<void>((resolve) => {
          this.#waiter = resolve;
        });
      }
    } finally {
      // The consumer broke out of its loop (or the stream ended): release the producer side.
      this.close();
    }
  }

  #wake(): void {
    const waiter = this.#waiter;
    this.#waiter = undefined;
    waiter?.();
  }
}
