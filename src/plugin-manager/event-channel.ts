import { AsyncQueue, errorMessage, type Logger } from '../common/index.js';
import { DEFAULT_EVENT_QUEUE_SIZE } from './plugin-manager-options.js';

/**
 * The plugin manager's one event channel: every event goes to the `onEvent`
 * callback (a throw is logged, not propagated) and to each subscriber's own
 * bounded queue, so a slow consumer never blocks the manager. A stream ends
 * when its signal aborts, its consumer breaks out, or the channel closes.
 */
export class EventChannel<T> {
  readonly #onEvent: ((event: T) => void) | undefined;
  readonly #logger: Logger;
  readonly #subscribers = new Set<AsyncQueue<T>>();
  #closed = false;

  constructor(onEvent: ((event: T) => void) | undefined, logger: Logger) {
    this.#onEvent = onEvent;
    this.#logger = logger;
  }

  emit(event: T): void {
    try {
      this.#onEvent?.(event);
    } catch (err) {
      this.#logger.error({ err }, `plugin event listener threw: ${errorMessage(err)}`);
    }
    for (const queue of this.#subscribers) queue.push(event);
  }

  subscribe(options: { signal?: AbortSignal; queueSize?: number } = {}): AsyncIterable<T> {
    const { signal } = options;
    const onAbort = () => queue.close();
    const queue = new AsyncQueue<T>({
      maxSize: options.queueSize ?? DEFAULT_EVENT_QUEUE_SIZE,
      onClose: () => {
        this.#subscribers.delete(queue);
        signal?.removeEventListener('abort', onAbort);
      },
    });
    if (this.#closed || signal?.aborted) {
      queue.close();
      return queue;
    }
    this.#subscribers.add(queue);
    signal?.addEventListener('abort', onAbort, { once: true });
    return queue;
  }

  /** Ends every stream (after its pending events) and refuses new ones. */
  close(): void {
    this.#closed = true;
    for (const queue of [...this.#subscribers]) queue.close();
  }
}
