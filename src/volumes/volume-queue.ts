/**
 * One operation per volume at a time (the CSI spec allows at most one call in
 * flight per volume; Nomad's serializedOp). Each operation has a deadline:
 * one still waiting when it passes is rejected (503, retry) and never runs,
 * so a caller that gave up is never told "done" for work that did not happen.
 */
import { BerthError } from '../common/index.js';
import { CSI_RETRY_AFTER_SECONDS } from '../handlers/csi/index.js';

export class VolumeQueue {
  readonly #tails = new Map<string, { tail: Promise<void>; pending: number }>();

  /** True while `key` has an operation running or waiting. */
  busy(key: string): boolean {
    return this.#tails.has(key);
  }

  run<T>(key: string, deadline: number, what: string, task: () => Promise<T>): Promise<T> {
    let state = this.#tails.get(key);
    if (state === undefined) {
      state = { tail: Promise.resolve(), pending: 0 };
      this.#tails.set(key, state);
    }
    const entry = state;
    entry.pending += 1;
    let timedOut = false;
    let timer: NodeJS.Timeout | undefined;
    const expired = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(
        () => {
          timedOut = true;
          reject(
            new BerthError(
              'BERTH_CSI_DRIVER_UNAVAILABLE',
              `${what}: another operation on this volume is still running and the deadline passed; retry later`,
              { details: { retryAfterSeconds: CSI_RETRY_AFTER_SECONDS } },
            ),
          );
        },
        Math.max(0, deadline - Date.now()),
      );
    });
    const started = entry.tail.then(() => {
      if (timedOut) return undefined as never; // its caller already has its 503
      clearTimeout(timer);
      return task();
    });
    entry.tail = started.then(
      () => undefined,
      () => undefined,
    );
    void entry.tail.then(() => {
      entry.pending -= 1;
      if (entry.pending === 0 && this.#tails.get(key) === entry) this.#tails.delete(key);
    });
    // Once started the task runs to its end (its calls carry the same deadline).
    return Promise.race([started, expired]);
  }
}
