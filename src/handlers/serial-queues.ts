/**
 * Runs tasks one at a time per key, in call order, while different keys run
 * concurrently. An idle key holds no state, so long-lived processes that see
 * many plugin names do not accumulate entries.
 */
interface KeyState {
  tail: Promise<void>;
  pending: number;
}

const ignore = () => undefined;

export class SerialQueues {
  readonly #keys = new Map<string, KeyState>();

  /** Number of keys with work queued or running (for tests and diagnostics). */
  get activeKeys(): number {
    return this.#keys.size;
  }

  run<T>(key: string, task: () => T | Promise<T>): Promise<T> {
    let state = this.#keys.get(key);
    if (state === undefined) {
      state = { tail: Promise.resolve(), pending: 0 };
      this.#keys.set(key, state);
    }
    const entry = state;
    entry.pending += 1;
    // `then` turns a synchronous throw from the task into this call's rejection.
    const result = entry.tail.then(() => task());
    entry.tail = result.then(ignore, ignore).then(() => {
      entry.pending -= 1;
      if (entry.pending === 0 && this.#keys.get(key) === entry) this.#keys.delete(key);
    });
    return result;
  }
}
