/**
 * Test helpers that wrap a real source, in the spirit of client-go's fake
 * clientset: `countingSource` records every call as an action string
 * ("get secrets", "list secrets", "watch secrets") so tests can assert how
 * many requests a store made; `gatedSource` holds every list until the gate
 * opens (the "slow initial LIST" scenario).
 */
import { abortedError } from '../common/index.js';
import type { ObjectResource, ObjectSource } from '../objects/index.js';

export interface CountingSource extends ObjectSource {
  /** Actions recorded since the last reset, in call order, e.g. ["list secrets", "watch secrets"]. */
  actions(): string[];
  /** How many recorded actions match, e.g. count('get', 'secrets'). */
  count(verb: 'get' | 'list' | 'watch', resource?: ObjectResource): number;
  reset(): void;
}

export function countingSource(inner: ObjectSource): CountingSource {
  let recorded: Array<{ verb: 'get' | 'list' | 'watch'; resource: ObjectResource }> = [];
  return {
    get(resource, namespace, name, options) {
      recorded.push({ verb: 'get', resource });
      return inner.get(resource, namespace, name, options);
    },
    list(resource, namespace, options) {
      recorded.push({ verb: 'list', resource });
      return inner.list(resource, namespace, options);
    },
    watch(resource, namespace, options) {
      recorded.push({ verb: 'watch', resource });
      return inner.watch(resource, namespace, options);
    },
    get state() {
      return inner.state;
    },
    start: (signal) => inner.start(signal),
    stop: () => inner.stop(),
    [Symbol.asyncDispose]: () => inner.stop(),
    actions: () => recorded.map((a) => `${a.verb} ${a.resource}`),
    count: (verb, resource) =>
      recorded.filter((a) => a.verb === verb && (resource === undefined || a.resource === resource)).length,
    reset() {
      recorded = [];
    },
  };
}

export interface GatedSource extends ObjectSource {
  /** Lets every held and future list through (until stop()). */
  open(): void;
  /** Holds lists again. */
  shut(): void;
  /** Lists currently held at the gate. */
  readonly heldLists: number;
}

/** Wraps a source so that list() waits while the gate is shut. Starts shut unless `open` is true. */
export function gatedSource(inner: ObjectSource, options: { open?: boolean } = {}): GatedSource {
  let isOpen = options.open ?? false;
  const waiting = new Set<() => void>();
  const passGate = (signal: AbortSignal | undefined): Promise<void> => {
    if (isOpen) return Promise.resolve();
    return new Promise((resolve, reject) => {
      if (signal?.aborted) {
        reject(abortedError(signal, 'list'));
        return;
      }
      const onAbort = () => {
        waiting.delete(release);
        reject(abortedError(signal, 'list'));
      };
      const release = () => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      };
      waiting.add(release);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  };
  return {
    get: (resource, namespace, name, getOptions) => inner.get(resource, namespace, name, getOptions),
    async list(resource, namespace, listOptions) {
      await passGate(listOptions?.signal);
      return inner.list(resource, namespace, listOptions);
    },
    watch: (resource, namespace, watchOptions) => inner.watch(resource, namespace, watchOptions),
    get state() {
      return inner.state;
    },
    start: (signal) => inner.start(signal),
    stop: () => inner.stop(),
    [Symbol.asyncDispose]: () => inner.stop(),
    open() {
      isOpen = true;
      for (const release of [...waiting]) release();
      waiting.clear();
    },
    shut() {
      isOpen = false;
    },
    get heldLists() {
      return waiting.size;
    },
  };
}
