/**
 * Timing helpers. Durations are in milliseconds from a monotonic clock.
 * Every loop here is bounded (a fixed count, or a deadline that throws).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';

/** Monotonic now in ms, with sub-microsecond resolution. */
export function nowMs(): number {
  return Number(process.hrtime.bigint()) / 1e6;
}

/** Lets queued I/O callbacks and other tasks run (one macrotask turn). */
export function yieldToLoop(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/**
 * A one-shot latch that records the monotonic time it was opened, so a
 * callback can stamp the moment something happened and the benchmark can
 * wait for it with a deadline (never forever).
 */
export class Stamp {
  #at: number | undefined;
  #resolve: ((at: number) => void) | undefined;
  readonly #promise: Promise<number>;

  constructor() {
    this.#promise = new Promise((resolve) => {
      this.#resolve = resolve;
    });
  }

  get done(): boolean {
    return this.#at !== undefined;
  }

  mark(): void {
    if (this.#at !== undefined) return;
    this.#at = nowMs();
    this.#resolve?.(this.#at);
  }

  /** The time mark() was called; rejects after `timeoutMs` if it never is. */
  wait(what: string, timeoutMs = 15_000): Promise<number> {
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`timed out after ${timeoutMs} ms waiting for ${what}`)),
        timeoutMs,
      );
    });
    return Promise.race([this.#promise, deadline]).finally(() => clearTimeout(timer));
  }
}

/** A short temp dir under /tmp (unix socket paths are limited to ~107 bytes). */
export function makeTempDir(prefix: string): { path: string; remove(): void } {
  const path = mkdtempSync(join('/tmp', prefix));
  return { path, remove: () => rmSync(path, { recursive: true, force: true }) };
}

/**
 * Runs `rounds` rounds; each round runs every case once, in a rotating order,
 * so slow drifts of a shared machine hit every case alike (interleaving instead
 * of measuring case A to the end and then case B).
 */
export async function interleave(
  rounds: number,
  cases: ReadonlyArray<(round: number) => Promise<void> | void>,
): Promise<void> {
  for (let round = 0; round < rounds; round++) {
    for (let i = 0; i < cases.length; i++) {
      const run = cases[(round + i) % cases.length];
      if (run !== undefined) await run(round);
    }
  }
}
