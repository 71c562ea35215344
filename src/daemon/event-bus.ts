import { AsyncQueue, type Clock, type PluginEvent } from '../common/index.js';

export interface EventSubscription extends AsyncIterable<PluginEvent> {
  close(): void;
}

export interface SubscribeOptions {
  /** Only events about plugins of this type (plus lagged and storage-error, which concern everyone). */
  pluginType?: string;
  /** Events held for this subscriber; beyond it the oldest are dropped and a `lagged` marker says how many. */
  queueSize: number;
}

export interface EventBusOptions {
  clock: Clock;
  /** Sees every published event (metrics, logs). */
  onPublish?: (event: PluginEvent) => void;
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
    default:
      return undefined;
  }
}

function matches(event: PluginEvent, pluginType: string | undefined): boolean {
  if (pluginType === undefined || event.type === 'lagged' || event.type === 'storage-error') return true;
  return eventPluginType(event) === pluginType;
}

/**
 * Fans the daemon's PluginEvents out to its API clients. Every subscriber has
 * its own bounded queue, so a client that reads slowly (or not at all) never
 * delays the registry or the other clients; it is told how much it missed.
 */
export class EventBus {
  readonly #clock: Clock;
  readonly #onPublish: ((event: PluginEvent) => void) | undefined;
  readonly #subscribers = new Set<{ queue: AsyncQueue<PluginEvent>; pluginType: string | undefined }>();
  #closed = false;

  constructor(options: EventBusOptions) {
    this.#clock = options.clock;
    this.#onPublish = options.onPublish;
  }

  get subscriberCount(): number {
    return this.#subscribers.size;
  }

  publish(event: PluginEvent): void {
    if (this.#closed) return;
    this.#onPublish?.(event);
    for (const subscriber of this.#subscribers) {
      if (matches(event, subscriber.pluginType)) subscriber.queue.push(event);
    }
  }

  subscribe(options: SubscribeOptions): EventSubscription {
    const clock = this.#clock;
    const entry = {
      pluginType: options.pluginType,
      queue: new AsyncQueue<PluginEvent>({
        maxSize: options.queueSize,
        lagItem: (dropped) => ({ type: 'lagged', at: clock.now(), dropped }),
        onClose: () => this.#subscribers.delete(entry),
      }),
    };
    if (this.#closed) entry.queue.close();
    else this.#subscribers.add(entry);
    return {
      [Symbol.asyncIterator]: () => entry.queue[Symbol.asyncIterator](),
      close: () => entry.queue.close(),
    };
  }

  /** Ends every subscription (their streams finish after pending events). */
  close(): void {
    this.#closed = true;
    for (const subscriber of [...this.#subscribers]) subscriber.queue.close();
  }
}
