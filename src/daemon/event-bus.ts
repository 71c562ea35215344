import {
  AsyncQueue,
  type Clock,
  type Lifecycle,
  LifecycleComponent,
  type PluginEvent,
} from '../common/index.js';
import { DEFAULT_EVENT_RING_SIZE } from './event-bus-options.js';

/**
 * What a subscriber receives: an event with its id; `lagged` when its queue
 * overflowed (it missed `dropped` events and should re-list); `reset` first,
 * when it asked to resume after an id the bus no longer holds (it should
 * re-list; the events that follow are newer than `id`).
 */
export type StreamItem<T> =
  | { readonly kind: 'event'; readonly id: number; readonly event: T }
  | { readonly kind: 'lagged'; readonly at: number; readonly dropped: number }
  | {
      readonly kind: 'reset';
      readonly at: number;
      /** The newest id the bus has handed out: resume from here after re-listing. */
      readonly id: number;
      readonly lastEventId: number;
      /** The oldest id still held (null: none held). */
      readonly oldestId: number | null;
    };

/** What a subscriber asks for. The stream means what the registry's subscribe means: it ends on abort or stop. */
export interface EventSubscribeOptions {
  /** Items held for this subscriber; beyond it the oldest are dropped and a `lagged` marker says how many. */
  queueSize: number;
  /** Ends the stream when aborted (breaking out of the iteration ends it too). */
  signal?: AbortSignal;
  /**
   * Resume after this id: the held events after it (that pass the filter)
   * come first, in order; if the bus no longer holds every event after it
   * (or never handed it out), a `reset` item comes first instead.
   */
  after?: number;
}

export interface EventBusOptions<T> {
  clock: Clock;
  /** Most recent events held for subscribers that resume (`after`); 0 holds none. Default DEFAULT_EVENT_RING_SIZE. */
  ringSize?: number;
  /** Sees every published event (metrics, logs). */
  onPublish?: (event: T) => void;
  /** Whether an event passes a subscriber's filter; default: the plugin-type filter of /v1/events (matchesPluginType). */
  matches?: (event: T, filter: string) => boolean;
}

/** The plugin type an event is about, if any. */
export function eventPluginType(event: PluginEvent): string | undefined {
  switch (event.type) {
    case 'registered':
    case 'updated':
    case 'deregistered':
      return event.plugin.type;
    case 'failed':
      return event.plugin?.type;
    case 'devices-changed':
      return 'DevicePlugin';
    case 'driver-unusable':
      return event.plugin.type;
    default:
      return undefined;
  }
}

/** The plugin bus's filter: events about plugins of one type; `storage-error` concerns everyone. */
export function matchesPluginType(event: PluginEvent, pluginType: string): boolean {
  if (event.type === 'lagged' || event.type === 'storage-error') return true;
  return eventPluginType(event) === pluginType;
}

interface Subscriber<T> {
  queue: AsyncQueue<StreamItem<T>>;
  filter: string | undefined;
}

/**
 * The first id of a bus: the clock in microseconds, so a restarted daemon
 * hands out ids above its predecessor's (unless that one published more than
 * a million events a second) and a client resuming with an id from before
 * the restart is told to re-list instead of being replayed the wrong events.
 */
function firstId(clock: Clock): number {
  return Math.max(0, Math.floor(clock.now())) * 1000;
}

/**
 * Fans events out to the daemon's API clients, each with its own bounded
 * queue, so a client that reads slowly (or not at all) never delays the
 * publisher or the other clients; it is told how much it missed. Every event
 * gets an id, increasing by one per event, and the last `ringSize` events
 * are held so a client that reconnects can resume where it was.
 *
 * Lifecycle (common/lifecycle.ts): the bus publishes from creation (the
 * daemon's start-up events included); stop() ends every stream after its
 * pending events and refuses new subscriptions.
 */
export class EventBus<T = PluginEvent> extends LifecycleComponent implements Lifecycle {
  readonly #clock: Clock;
  readonly #onPublish: ((event: T) => void) | undefined;
  readonly #matches: (event: T, filter: string) => boolean;
  readonly #ringSize: number;
  /** The held events, oldest first; a circular buffer once full. */
  readonly #ring: Array<StreamItem<T> & { kind: 'event' }> = [];
  #ringStart = 0;
  #lastId: number;
  readonly #subscribers = new Set<Subscriber<T>>();

  constructor(options: EventBusOptions<T>) {
    super();
    this.#clock = options.clock;
    this.#onPublish = options.onPublish;
    this.#matches = options.matches ?? ((event, filter) => matchesPluginType(event as PluginEvent, filter));
    this.#ringSize = Math.max(0, options.ringSize ?? DEFAULT_EVENT_RING_SIZE);
    this.#lastId = firstId(options.clock);
  }

  get subscriberCount(): number {
    return this.#subscribers.size;
  }

  /** The newest id handed out (the first id minus one before any event). */
  get lastId(): number {
    return this.#lastId;
  }

  publish(event: T): void {
    if (this.#stopped()) return;
    this.#onPublish?.(event);
    this.#lastId += 1;
    // One object per event, shared by every subscriber (its SSE text is cached on it).
    const item = { kind: 'event', id: this.#lastId, event } as const;
    if (this.#ringSize > 0) {
      if (this.#ring.length < this.#ringSize) this.#ring.push(item);
      else {
        this.#ring[this.#ringStart] = item;
        this.#ringStart = (this.#ringStart + 1) % this.#ringSize;
      }
    }
    for (const subscriber of this.#subscribers) {
      if (subscriber.filter === undefined || this.#matches(event, subscriber.filter)) {
        subscriber.queue.push(item);
      }
    }
  }

  /**
   * Events that pass `filter` (every event when undefined), from now on (or
   * from after `options.after`), until `signal` aborts, the consumer stops
   * iterating, or the bus stops.
   */
  subscribe(filter: string | undefined, options: EventSubscribeOptions): AsyncIterable<StreamItem<T>> {
    const { signal } = options;
    const clock = this.#clock;
    const onAbort = () => subscriber.queue.close();
    const subscriber: Subscriber<T> = {
      filter,
      queue: new AsyncQueue<StreamItem<T>>({
        maxSize: options.queueSize,
        lagItem: (dropped) => ({ kind: 'lagged', at: clock.now(), dropped }),
        onClose: () => {
          this.#subscribers.delete(subscriber);
          signal?.removeEventListener('abort', onAbort);
        },
      }),
    };
    if (this.#stopped() || signal?.aborted) {
      subscriber.queue.close();
      return subscriber.queue;
    }
    // Replay and joining happen in one turn, so no event falls between them.
    if (options.after !== undefined) this.#replay(subscriber, options.after);
    this.#subscribers.add(subscriber);
    signal?.addEventListener('abort', onAbort, { once: true });
    return subscriber.queue;
  }

  #replay(subscriber: Subscriber<T>, after: number): void {
    const held = this.#held();
    const oldest = held[0]?.id ?? this.#lastId + 1;
    // Resumable: `after` was handed out, and every event after it is still held.
    if (after > this.#lastId || after < oldest - 1) {
      subscriber.queue.push({
        kind: 'reset',
        at: this.#clock.now(),
        id: this.#lastId,
        lastEventId: after,
        oldestId: held[0]?.id ?? null,
      });
      return;
    }
    for (const item of held) {
      if (item.id <= after) continue;
      if (subscriber.filter === undefined || this.#matches(item.event, subscriber.filter)) {
        subscriber.queue.push(item);
      }
    }
  }

  /** The held events, oldest first. */
  #held(): Array<StreamItem<T> & { kind: 'event' }> {
    return [...this.#ring.slice(this.#ringStart), ...this.#ring.slice(0, this.#ringStart)];
  }

  /** Ends every subscription (their streams finish after pending events) and refuses new ones. */
  protected override onStop(): void {
    for (const subscriber of [...this.#subscribers]) subscriber.queue.close();
  }

  #stopped(): boolean {
    return this.state === 'stopping' || this.state === 'stopped';
  }
}
