import { whenAborted } from './abort-hub.js';

/**
 * Time is always injected. Components take a Clock in their options so tests
 * drive time with src/testing FakeClock instead of sleeping for real timeouts.
 */
export interface ClockTimer {
  readonly __clockTimer: true;
}

export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  setTimeout(callback: () => void, ms: number): ClockTimer;
  clearTimeout(timer: ClockTimer): void;
}

class SystemTimer implements ClockTimer {
  readonly __clockTimer = true as const;
  constructor(readonly handle: NodeJS.Timeout) {}
}

export const systemClock: Clock = {
  now: () => Date.now(),
  setTimeout(callback, ms) {
    return new SystemTimer(setTimeout(callback, Math.max(0, ms)));
  },
  clearTimeout(timer) {
    if (timer instanceof SystemTimer) clearTimeout(timer.handle);
  },
};

/** Resolves after `ms` on the given clock; rejects with the signal's reason when aborted. */
export function sleep(clock: Clock, ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    let offAbort = () => {};
    const timer = clock.setTimeout(() => {
      offAbort();
      resolve();
    }, ms);
    offAbort = whenAborted(signal, () => {
      clock.clearTimeout(timer);
      reject(signal?.reason);
    });
  });
}
