import type { ServerResponse } from 'node:http';
import type { Clock, ClockTimer, PluginEvent } from '../../common/index.js';
import { eventView } from './views.js';

/** A stream of events that the SSE loop can end when its client goes. */
export interface EventSubscription extends AsyncIterable<PluginEvent> {
  close(): void;
}

export interface SseOptions {
  clock: Clock;
  /** A comment line this often keeps proxies and idle timeouts from closing the stream. */
  heartbeatMs: number;
  /**
   * Bytes a client may leave unread in its socket buffer; past it the client
   * is sent a `lagged` event and cut off (it re-lists and subscribes again).
   */
  maxBufferedBytes?: number;
  /** Told when a client is cut off for lagging. */
  onLagged?: () => void;
}

/**
 * Every client receives the same event object from the bus, so its text is
 * built once and shared, whatever the number of clients (a WeakMap lets it go
 * with the event).
 */
const formatted = new WeakMap<PluginEvent, string>();
const formatCounter = { count: 0 };

/** One server-sent event: `event: <type>` and `data: <JSON>` (JSON has no raw newlines). */
export function formatSseEvent(event: PluginEvent): string {
  let text = formatted.get(event);
  if (text === undefined) {
    formatCounter.count += 1;
    text = `event: ${event.type}\ndata: ${JSON.stringify(eventView(event))}\n\n`;
    formatted.set(event, text);
  }
  return text;
}

/** How many times an event text was built (for tests of the serialise-once rule). */
export function formattedCount(): number {
  return formatCounter.count;
}

/**
 * Streams a subscription to one HTTP client until either side ends it. A slow
 * reader is absorbed by its socket buffer up to `maxBufferedBytes`; past that
 * (or when its subscription queue overflows) it gets a `lagged` event and the
 * stream ends, so one stuck client costs a bounded amount of memory and never
 * delays the daemon. Ends the response when the subscription ends (daemon
 * shutdown) and closes the subscription when the client disconnects.
 */
export async function streamSse(
  res: ServerResponse,
  subscription: EventSubscription,
  options: SseOptions,
): Promise<void> {
  res.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache',
    // The stream is the whole life of this connection: when it ends, so does the socket,
    // so a daemon that is stopping is not kept waiting by an idle keep-alive connection.
    connection: 'close',
    'x-accel-buffering': 'no',
  });
  // An opening comment flushes the headers, so a client knows it is subscribed.
  res.write(': berth events\n\n');

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
    const lagged: PluginEvent = { type: 'lagged', at: options.clock.now(), dropped };
    res.end(formatSseEvent(lagged));
    // A client that reads nothing would keep the socket (and our buffer) forever.
    const kill = options.clock.setTimeout(() => res.destroy(), 1000);
    res.once('close', () => options.clock.clearTimeout(kill));
  };
  try {
    for await (const event of subscription) {
      if (res.destroyed || res.writableEnded) break;
      if (event.type === 'lagged') {
        // The subscription's own queue overflowed: the client missed events.
        cutOff(event.dropped);
        break;
      }
      if (res.writableLength > maxBuffered) {
        cutOff(1);
        break;
      }
      // Writes are not awaited: the socket buffer, bounded above, absorbs a slow
      // reader, so its events are never held back in the queue behind a drain.
      res.write(formatSseEvent(event));
    }
  } finally {
    if (timer) options.clock.clearTimeout(timer);
    res.off('close', onClose);
    subscription.close();
    if (!res.writableEnded) res.end();
  }
}
