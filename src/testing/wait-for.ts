/**
 * Waits for a condition with a generous deadline instead of a fixed sleep.
 * Polls on real time (short intervals) and fails with `what` if the deadline passes.
 */
export interface WaitForOptions {
  timeoutMs?: number;
  intervalMs?: number;
}

export async function waitFor<T>(
  what: string,
  probe: () => T | undefined | false | null | Promise<T | undefined | false | null>,
  options: WaitForOptions = {},
): Promise<T> {
  const timeoutMs = options.timeoutMs ?? 30_000;
  const intervalMs = options.intervalMs ?? 5;
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  while (true) {
    try {
      const value = await probe();
      if (value !== undefined && value !== false && value !== null) return value;
    } catch (err) {
      lastError = err;
    }
    if (Date.now() > deadline) {
      const suffix = lastError === undefined ? '' : ` (last error: ${String(lastError)})`;
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${suffix}`);
    }
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

/** Resolves with the next item of an async iterator, or fails after the deadline. */
export async function nextWithin<T>(
  iterator: AsyncIterator<T>,
  what: string,
  timeoutMs = 30_000,
): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`timed out after ${timeoutMs} ms waiting for ${what}`)),
      timeoutMs,
    );
  });
  try {
    const result = await Promise.race([iterator.next(), timeout]);
    if (result.done) throw new Error(`stream ended while waiting for ${what}`);
    return result.value;
  } finally {
    clearTimeout(timer);
  }
}
