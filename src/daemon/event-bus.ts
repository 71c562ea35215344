import {
  AsyncQueue,
  type Clock,
  type Lifecycle,
  LifecycleController,
  type LifecycleState,
  type PluginEvent,
} from '../common/index.js';

/** What a subscriber asks for. The stream means what the registry's subscribe means: it ends on abort or stop. */
export interface EventSubscribeOptions {
  /** Events held for this subscriber; beyond it the oldest are dropped and a `lagged` marker says how many. */
  queueSize: number;
  /** Ends the stream when aborted (breaking out of the iteration ends it too). */
  signal?: AbortSignal;
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
    case 'driver-unusable':
      return event.plugin.type;
    default:
      return undefined;
  }
}

function matches(event: PluginEvent, pluginType: string | undefined): boolean {
  if (pluginType === undefined || event.type === 'lagged' || event.type === 'storage-error') return true;
  return eventPluginType(event) === pluginType;
}

interface Subscriber {
  queue: AsyncQueue<PluginEvent>;
  pluginType: string | undefined;
}

/**
 * Fans the daemon's PluginEvents out to its API clients. Every subscriber has
 * its own bounded queue, so a client that reads slowly (or not at all) never
 * delays the registry or the other clients; it is told how much it missed.
 *
 * Lifecycle (common/lifecycle.ts): the bus publishes from creation (the
 * daemon's start-up events included); stop() ends every stream after its
 * pending events and refuses new subscriptions.
 */
export class EventBus implements Lifecycle {
  readonly #clock: Clock;
  readonly #onPublish: ((event: PluginEvent) => void) | undefined;
  readonly #subscribers = new Set<Subscriber>();
  readonly #lifecycle = new LifecycleController({
    onStop: () => {
      for (const subscriber of [...this.#subscribers]) subscriber.queue.close();
    },
  });

  constructor(options: EventBusOptions) {
    this.#clock = options.clock;
    this.#onPublish = options.onPublish;
  }

  get state(): LifecycleState {
    return this.#lifecycle.state;
  }

  get subscriberCount(): number {
    return this.#subscribers.size;
  }

  publish(event: PluginEvent): void {
    if (this.#stopped()) return;
    this.#onPublish?.(event);
    for (const subscriber of this.#subscribers) {
      if (matches(event, subscriber.pluginType)) subscriber.queue.push(event);
    }
  }

  /**
   * Events about plugins of `pluginType` (every type when undefined; `lagged`
   * and `storage-error` concern everyone), from now on, until `signal`
   * aborts, the consumer stops iterating, or the bus stops.
   */
  subscribe(pluginType: string | undefined, options: EventSubscribeOptions): AsyncIterable<PluginEvent> {
    const { signal } = options;
    const clock = this.#clock;
    const onAbort = () => subscriber.queue.close();
    const subscriber: Subscriber = {
      pluginType,
      queue: new AsyncQueue<PluginEvent>({
        maxSize: options.queueSize,
        lagItem: (dropped) => ({ type: 'lagged', at: clock.now(), dropped }),
        onClose: () => {
          this.#subscribers.delete(subscriber);
          signal?.removeEventListener('abort', onAbort);
        },
      }),
    };
    if (this.#stopped() || signal?.aborted) {
      subscriber.queue.close();
    } else {
      this.#subscribers.add(subscriber);
      signal?.addEventListener('abort', onAbort, { once: true });
    }
    return subscriber.queue;
  }

  /** Nothing to bring up (the bus publishes from creation); aborting `signal` stops it. */
  start(signal?: AbortSignal): Promise<void> {
    return this.#lifecycle.start(signal);
  }

  /** Ends every subscription (their streams finish after pending events) and refuses new ones. Memoised. */
  stop(): Promise<void> {
    return this.#lifecycle.stop();
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.stop();
  }

  #stopped(): boolean {
    return this.#lifecycle.state === 'stopping' || this.#lifecycle.state === 'stopped';
  }
}
