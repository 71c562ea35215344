import type { IncomingMessage } from 'node:http';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Clock, Logger } from '../../common/index.js';
import type { EventBus } from '../event-bus.js';
import { errorBody } from './http-errors.js';
import { parseLastEventId, streamSse } from './sse.js';

/** Which of the daemon's listeners a request came in on: the unix socket has no remote address. */
export type ListenerKind = 'unix' | 'tcp';

export function listenerOf(req: IncomingMessage): ListenerKind {
  return req.socket.remoteAddress === undefined ? 'unix' : 'tcp';
}

/**
 * Event streams open at once, counted per listener and shared by every
 * stream route: 64 streams over TCP do not lock a local `berth events` out
 * on the unix socket.
 */
export class StreamBudget {
  readonly #max: number;
  readonly #open = new Map<ListenerKind, number>();

  constructor(maxPerListener: number) {
    this.#max = maxPerListener;
  }

  get max(): number {
    return this.#max;
  }

  open(listener: ListenerKind): number {
    return this.#open.get(listener) ?? 0;
  }

  /** Takes a slot; false when the listener's streams are all in use. */
  take(listener: ListenerKind): boolean {
    const open = this.open(listener);
    if (open >= this.#max) return false;
    this.#open.set(listener, open + 1);
    return true;
  }

  release(listener: ListenerKind): void {
    this.#open.set(listener, Math.max(0, this.open(listener) - 1));
  }
}

export interface EventStreamOptions {
  clock: Clock;
  logger: Logger;
  /** Items held for one slow client before older ones are dropped (a `lagged` marker says so). */
  queueSize: number;
  heartbeatMs: number;
  budget: StreamBudget;
  /** Unread bytes a client may leave in its socket buffer before it is cut off as lagged. */
  maxBufferedBytes?: number;
  /** Told when a client is refused for the cap ('cap') or cut off for lagging ('lagged'). */
  onLimit?: (what: 'cap' | 'lagged') => void;
}

export interface StreamRequest<T> {
  bus: EventBus<T>;
  /** The subscriber's filter (`?type=`), if any. */
  filter: string | undefined;
  greeting: string;
  view: (event: T) => unknown;
}

/**
 * Serves one server-sent event stream from a bus: the per-listener client
 * cap, `Last-Event-ID` resumption (replay, or `reset` when the id is no
 * longer held), the heartbeat, and the unread-bytes bound. Every stream route
 * (/v1/events, /v1/cluster/events) goes through here.
 */
export function serveEventStream<T>(
  request: FastifyRequest,
  reply: FastifyReply,
  stream: StreamRequest<T>,
  options: EventStreamOptions,
): FastifyReply {
  const lastEventId = parseLastEventId(request.raw);
  if (typeof lastEventId === 'object') {
    return reply.code(400).send(errorBody('BERTH_BAD_REQUEST', lastEventId.error));
  }
  const listener = listenerOf(request.raw);
  if (!options.budget.take(listener)) {
    options.onLimit?.('cap');
    return reply
      .code(503)
      .header('retry-after', '1')
      .send(
        errorBody(
          'BERTH_TOO_MANY_CLIENTS',
          `berth already streams events to ${options.budget.max} clients on its ${listener === 'unix' ? 'unix socket' : 'TCP listener'} (api.maxEventStreams); retry later`,
        ),
      );
  }
  // Closing it (the client went away) aborts the subscription; the bus ends it when the daemon stops.
  const clientGone = new AbortController();
  const items = stream.bus.subscribe(stream.filter, {
    queueSize: options.queueSize,
    signal: clientGone.signal,
    ...(lastEventId === undefined ? {} : { after: lastEventId }),
  });
  const subscription = {
    [Symbol.asyncIterator]: () => items[Symbol.asyncIterator](),
    close: () => clientGone.abort(),
  };
  // The stream outlives fastify's request/reply cycle: take the raw response over.
  reply.hijack();
  void streamSse(reply.raw, subscription, {
    clock: options.clock,
    heartbeatMs: options.heartbeatMs,
    greeting: stream.greeting,
    view: stream.view,
    ...(options.maxBufferedBytes === undefined ? {} : { maxBufferedBytes: options.maxBufferedBytes }),
    onLagged: () => options.onLimit?.('lagged'),
  })
    .catch((err: unknown) => options.logger.warn({ err }, 'event stream ended with an error'))
    .finally(() => options.budget.release(listener));
  return reply;
}
