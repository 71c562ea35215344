import { errorMessage, isBerthError } from '../common/index.js';
import type { ApiClient, SseMessage } from './api-client.js';

/** The first retry after a dropped stream; it doubles up to RETRY_MAX_MS. */
export const RETRY_FIRST_MS = 250;
export const RETRY_MAX_MS = 5_000;

export interface FollowOptions {
  signal: AbortSignal;
  /** Called each time a stream is open (the first time and after every reconnect). */
  onOpen?: () => void;
  /** One line for people about the connection (lost, reconnecting), not an event. */
  onNotice?: (line: string) => void;
  /** Waits between reconnects (tests inject a short one); resolves early when `signal` aborts. */
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
}

function abortableSleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}

/** A refusal that retrying will not change (a bad token, a bad request, a route that is not there). */
function isPermanent(err: unknown): boolean {
  if (!isBerthError(err, 'BERTH_API_ERROR')) return false;
  const status = (err.details as { status?: number } | undefined)?.status ?? 0;
  return status >= 400 && status < 500 && status !== 429;
}

/**
 * Follows an event stream across dropped connections: after a drop it waits
 * (250 ms doubling to 5 s) and reconnects with `Last-Event-ID`, so the daemon
 * replays what was missed (or sends `reset` when it no longer holds it). The
 * first connection's failure is thrown, as a list command's would be; later
 * ones are retried until `signal` aborts, except refusals retrying cannot
 * change (401, 404, ...), which are thrown.
 */
export async function* followEvents(
  client: ApiClient,
  path: string,
  options: FollowOptions,
): AsyncGenerator<SseMessage> {
  const { signal } = options;
  const sleep = options.sleep ?? abortableSleep;
  let lastId: string | undefined;
  let connected = false;
  let failures = 0;
  while (!signal.aborted) {
    let why: string;
    try {
      const stream = await client.openEvents(path, signal, lastId);
      connected = true;
      failures = 0;
      options.onOpen?.();
      for await (const message of stream) {
        if (message.id !== undefined) lastId = message.id;
        yield message;
      }
      why = 'the daemon closed the stream';
    } catch (err) {
      if (signal.aborted) return;
      if (!connected || isPermanent(err)) throw err;
      why = errorMessage(err);
    }
    if (signal.aborted) return;
    const delay = Math.min(RETRY_FIRST_MS * 2 ** failures, RETRY_MAX_MS);
    failures += 1;
    options.onNotice?.(
      `berth: event stream lost (${why}); reconnecting in ${(delay / 1000).toFixed(delay < 1000 ? 2 : 0)}s${lastId === undefined ? '' : ` from event ${lastId}`}`,
    );
    await sleep(delay, signal);
  }
}
