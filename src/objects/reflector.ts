/**
 * A minimal list/watch reflector for ONE object (the kubelet runs one per
 * referenced secret/configmap, listing with fieldSelector metadata.name=<name>).
 *
 * LIST → replace the local copy (which marks it initialised) → WATCH from the
 * list's resourceVersion, applying ADDED/MODIFIED/DELETED; BOOKMARK only moves
 * the version on. When the watch ends or fails (BERTH_RESOURCE_VERSION_TOO_OLD
 * included) or the list fails, it waits a backoff on the injected clock
 * (DEFAULT_REFLECTOR_BACKOFF: 800 ms doubling to 30 s, like client-go) and lists again. A cycle that ran
 * longer than the reset period starts the backoff over. The run ends when the
 * signal aborts; nothing is applied after that.
 */
import { type BackoffSetting, type Clock, type Logger, nextBackoffMs, sleep } from '../common/index.js';
import { DEFAULT_REFLECTOR_BACKOFF, REFLECTOR_BACKOFF_RESET_MS } from './objects-options.js';
import type { KubeObject, ObjectResource, ObjectSource } from './source.js';

/** Where a reflector puts what it sees. */
export interface ReflectorSink {
  /** The result of a list: the object (or undefined when absent). Marks the copy initialised. */
  replace(object: KubeObject | undefined): void;
  /** A watch event for the object; undefined means it was deleted. */
  update(object: KubeObject | undefined): void;
}

export interface ReflectorOptions {
  source: ObjectSource;
  resource: ObjectResource;
  namespace: string;
  name: string;
  sink: ReflectorSink;
  clock: Clock;
  logger: Logger;
  /** Delay between failed list/watch cycles. Default DEFAULT_REFLECTOR_BACKOFF; false relists at once. */
  backoff?: BackoffSetting;
}

/** Runs list/watch until `signal` aborts. Never rejects. */
export async function runReflector(options: ReflectorOptions, signal: AbortSignal): Promise<void> {
  const { source, resource, namespace, name, sink, clock, logger } = options;
  const policy = options.backoff ?? DEFAULT_REFLECTOR_BACKOFF;
  let backoff = nextBackoffMs(policy, 0);
  while (!signal.aborted) {
    const cycleStart = clock.now();
    try {
      const list = await source.list(resource, namespace, { name, signal });
      if (signal.aborted) return;
      sink.replace(list.items.find((o) => o.metadata.name === name));
      let version = list.resourceVersion;
      for await (const event of source.watch(resource, namespace, {
        name,
        resourceVersion: version,
        signal,
      })) {
        if (signal.aborted) return;
        if (event.type === 'BOOKMARK') {
          version = event.resourceVersion;
          continue;
        }
        if (event.object.metadata.name !== name) continue;
        sink.update(event.type === 'DELETED' ? undefined : event.object);
        version = event.object.metadata.resourceVersion ?? version;
      }
      if (signal.aborted) return;
      logger.debug({ namespace, name, resource, resourceVersion: version }, 'watch ended; re-listing');
    } catch (err) {
      if (signal.aborted) return;
      logger.warn({ namespace, name, resource, err }, 'list/watch failed; re-listing after backoff');
    }
    if (clock.now() - cycleStart >= REFLECTOR_BACKOFF_RESET_MS) backoff = nextBackoffMs(policy, 0);
    try {
      await sleep(clock, backoff, signal);
    } catch {
      return;
    }
    backoff = nextBackoffMs(policy, backoff);
  }
}
