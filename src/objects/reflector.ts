/**
 * A minimal list/watch reflector for ONE object (the kubelet runs one per
 * referenced secret/configmap, listing with fieldSelector metadata.name=<name>).
 *
 * LIST → replace the local copy (which marks it initialised) → WATCH from the
 * list's resourceVersion, applying ADDED/MODIFIED/DELETED; BOOKMARK only moves
 * the version on. When the watch ends or fails (BERTH_RESOURCE_VERSION_TOO_OLD
 * included) or the list fails, it waits a backoff on the injected clock
 * (800 ms doubling to 30 s, like client-go) and lists again. A cycle that ran
 * longer than the reset period starts the backoff over. The run ends when the
 * signal aborts; nothing is applied after that.
 */
import { type Clock, errorMessage, type Logger, sleep } from '../common/index.js';
import type { KubeObject, ObjectResource, ObjectSource } from './source.js';

export const REFLECTOR_INITIAL_BACKOFF_MS = 800;
export const REFLECTOR_MAX_BACKOFF_MS = 30_000;
/** A list+watch cycle that lasted this long counts as healthy: the next failure backs off from the start. */
export const REFLECTOR_BACKOFF_RESET_MS = 120_000;

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
  initialBackoffMs?: number;
  maxBackoffMs?: number;
}

/** Runs list/watch until `signal` aborts. Never rejects. */
export async function runReflector(options: ReflectorOptions, signal: AbortSignal): Promise<void> {
  const { source, resource, namespace, name, sink, clock, logger } = options;
  const initialBackoff = options.initialBackoffMs ?? REFLECTOR_INITIAL_BACKOFF_MS;
  const maxBackoff = options.maxBackoffMs ?? REFLECTOR_MAX_BACKOFF_MS;
  let backoff = initialBackoff;
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
      logger.warn(
        { namespace, name, resource, err: errorMessage(err) },
        'list/watch failed; re-listing after backoff',
      );
    }
    if (clock.now() - cycleStart >= REFLECTOR_BACKOFF_RESET_MS) backoff = initialBackoff;
    try {
      await sleep(clock, backoff, signal);
    } catch {
      return;
    }
    backoff = Math.min(backoff * 2, maxBackoff);
  }
}
