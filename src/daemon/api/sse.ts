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
}

/** One server-sent event: `event: <type>` and `data: <JSON>` (JSON has no raw newlines). */
export function formatSseEvent(event: PluginEvent): string {
  return `event: ${event.type}\ndata: ${JSON.stringify(eventView(event))}\n\n`;
}

/** Resolves when the response can take more data, or when the client has gone. */
function writable(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });
}

/**
 * Streams a subscription to one HTTP client until either side ends it. The
 * subscription's own bounded queue absorbs a slow reader; this loop only waits
 * for the socket to drain, never the daemon. Ends the response when the
 * subscription ends (daemon shutdown) and closes the subscription when the
 * client disconnects.
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

  try {
    for await (const event of subscription) {
      if (res.destroyed) break;
      if (!res.write(formatSseEvent(event))) await writable(res);
    }
  } finally {
    if (timer) options.clock.clearTimeout(timer);
    res.off('close', onClose);
    subscription.close();
    if (!res.writableEnded) res.end();
  }
}
