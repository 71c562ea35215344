/**
 * A promise-chain mutex: callers run one after another, in arrival order.
 * The TTL store keeps one per object, so concurrent reads of one object share
 * a single fetch while different objects are fetched in parallel.
 */
export class Mutex {
  #tail: Promise<void> = Promise.resolve();

  run<T>(fn: () => Promise<T>): Promise<T> {
    const result = this.#tail.then(fn);
    this.#tail = result.then(
      () => undefined,
      () => undefined,
    );
    return result;
  }
}
