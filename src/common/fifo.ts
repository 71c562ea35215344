/**
 * A first-in first-out queue on an array with a moving head: push and shift
 * are O(1) (Array#shift copies the array, which a storm's thousands of
 * waiters made quadratic). The consumed prefix is dropped when the queue
 * empties, or once it is most of a large array.
 */
export class Fifo<T> {
  #items: Array<T | undefined> = [];
  #head = 0;

  get size(): number {
    return this.#items.length - this.#head;
  }

  push(item: T): void {
    this.#items.push(item);
  }

  /** The oldest item, taken out; undefined when empty. */
  shift(): T | undefined {
    if (this.#head === this.#items.length) return undefined;
    const item = this.#items[this.#head];
    this.#items[this.#head] = undefined;
    this.#head += 1;
    if (this.#head === this.#items.length) {
      this.#items = [];
      this.#head = 0;
    } else if (this.#head > 1024 && this.#head * 2 > this.#items.length) {
      this.#items = this.#items.slice(this.#head);
      this.#head = 0;
    }
    return item;
  }
}
