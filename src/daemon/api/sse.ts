import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Clock, ClockTimer } from '../../common/index.js';
import type { StreamItem } from '../event-bus.js';

/** A stream of bus items that the SSE loop can end when its client goes. */
export interface EventSubscription<T> extends AsyncIterable<StreamItem<T>> {
  close(): void;
}

export interface SseOptions<T> {
  clock: Clock;
  /** A comment line this often keeps proxies and idle timeouts from closing the stream. */
  heartbeatMs: number;
  /** The opening comment (it flushes the headers, so a client knows it is subscribed). */
  greeting: string;
  /** The `data:` JSON of one event (its `event:` line is the event's `type`). */
  view: (event: T) => unknown;
  /**
   * Bytes a client may leave unread in its socket buffer; past it the client
   * is sent a `lagged` event and cut off (it re-lists and subscribes again).
   */
  maxBufferedBytes?: number;
  /** Told when a client is cut off for lagging. */
  onLagged?: () => void;
}

/**
 * Every client receives the same item object from the bus, so its text is
 * built once and shared, whatever the number of clients (a WeakMap lets it go
 * with the item).
 */
const formatted = new WeakMap<object, string>();
const formatCounter = { count: 0 };

/**
 * One server-sent event: `id: <n>`, `event: <type>` and `data: <JSON>` (JSON
 * has no raw newlines). `lagged` has no id (the client re-lists); `reset`
 * carries the newest id, the point to resume from after re-listing.
 */
export function formatSseItem<T>(item: StreamItem<T>, view: (event: T) => unknown): string {
  let text = formatted.get(item);
  if (text === undefined) {
    formatCounter.count += 1;
    switch (item.kind) {
      case 'event': {
        const type = (item.event as { type?: unknown }).type;
        text = `id: ${item.id}\nevent: ${String(type)}\ndata: ${JSON.stringify(view(item.event))}\n\n`;
        break;
      }
      case 'lagged':
        text = `event: lagged\ndata: ${JSON.stringify({ type: 'lagged', at: new Date(item.at).toISOString(), dropped: item.dropped })}\n\n`;
        break;
      case 'reset':
        text = `id: ${item.id}\nevent: reset\ndata: ${JSON.stringify({
          type: 'reset',
          at: new Date(item.at).toISOString(),
          lastEventId: item.lastEventId,
          oldestId: item.oldestId,
          message: 'events after Last-Event-ID are no longer held; re-list, then follow from this id',
        })}\n\n`;
        break;
    }
    formatted.set(item, text);
  }
  return text;
}

/** How many times an event text was built (for tests of the serialise-once rule). */
export function formattedCount(): number {
  return formatCounter.count;
}

/** Most digits a Last-Event-ID may have (ids are below 2^53). */
const LAST_EVENT_ID_MAX_DIGITS = 16;

/**
 * The `Last-Event-ID` header a reconnecting client sends: undefined when
 * absent, a number when it is one, else a string saying what is wrong.
 */
export function parseLastEventId(req: IncomingMessage): number | undefined | { error: string } {
  const raw = req.headers['last-event-id'];
  if (raw === undefined) return undefined;
  const text = (Array.isArray(raw) ? raw.join(',') : raw).trim();
  if (text === '') return undefined;
  if (!/^\d+$/.test(text) || text.length > LAST_EVENT_ID_MAX_DIGITS) {
    return {
      error: `Last-Event-ID must be an event id from this stream (a whole number of at most ${LAST_EVENT_ID_MAX_DIGITS} digits), got ${JSON.stringify(text.slice(0, 40))}`,
    };
  }
  return Number(text);
}

/**
 * Streams a subscription to one HTTP client until either side ends it. A slow
 * reader is absorbed by its socket buffer up to `maxBufferedBytes`; past that
 * (or when its subscription queue overflows) it gets a `lagged` event and the
 * stream ends, so one stuck client costs a bounded amount of memory and never
 * delays the daemon. Ends the response when the subscription ends (daemon
 * shutdown) and closes the subscription when the client disconnects.
 */
export async function streamSse<T>(
  res: ServerResponse,
  subscription: EventSubscription<T>,
  options: SseOptions<T>,
): Promise<void> {
  res.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache',
    // The stream is the whole life of this connection: when it ends, so does the socket,
    // so a daemon that is stopping is not kept waiting by an idle keep-alive connection.
    connection: 'close',
    'x-accel-buffering': 'no',
  });
  res.write(`: ${options.greeting}\n\n`);

  let timer: ClockTimer | undefined;
  const beat = () => {
    if (res.writableEnded || res.destroyed) return;
    res.write(': heartbeat\n\n');
    timer = options.clock.setTimeout(beat, options.heartbeatMs);
  };
  timer = options.clock.setTimeout(beat, options.heartbeatMs);
  const onClose = () => subscription.close();
  res.on('close', onClose);

  const maxBuffered = options.maxBufferedBytes ?? Number.POSITIVE_INFINITY;
  const cutOff = (dropped: number) => {
    options.onLagged?.();
    res.end(formatSseItem<T>({ kind: 'lagged', at: options.clock.now(), dropped }, options.view));
    // A client that reads nothing would keep the socket (and our buffer) forever.
    const kill = options.clock.setTimeout(() => res.destroy(), 1000);
    res.once('close', () => options.clock.clearTimeout(kill));
  };
  try {
    for await (const item of subscription) {
      if (res.destroyed || res.writableEnded) break;
      if (item.kind === 'lagged') {
        // The subscription's own queue overflowed: the client missed events.
        cutOff(item.dropped);
        break;
      }
      if (res.writableLength > maxBuffered) {
        cutOff(1);
        break;
      }
      // Writes are not awaited: the socket buffer, bounded above, absorbs a slow
      // reader, so its events are never held back in the queue behind a drain.
      res.write(formatSseItem(item, options.view));
    }
  } finally {
    if (timer) options.clock.clearTimeout(timer);
    res.off('close', onClose);
    subscription.close();
    if (!res.writableEnded) res.end();
  }
}
