import { AsyncLocalStorage } from 'node:async_hooks';
import type { KubeObject, ObjectResource, ObjectSource } from '../objects/index.js';
import type { ObjectReader } from './api/api-types.js';
import type { DaemonMetrics } from './metrics.js';

/**
 * Object-manager metrics without touching the object manager: the source is
 * wrapped to count its requests, and each API read runs in an
 * async context that the source wrapper marks when it is called. A read that
 * reached the source is a miss, one that did not is a cache hit.
 */
const readContext = new AsyncLocalStorage<{ sourceCalls: number }>();

type Metrics = Pick<DaemonMetrics, 'objectRequests' | 'sourceRequests'>;

export function meteredSource(source: ObjectSource, metrics: Metrics): ObjectSource {
  const mark = (resource: ObjectResource, verb: 'get' | 'list' | 'watch') => {
    metrics.sourceRequests.inc({ resource, verb });
    const context = readContext.getStore();
    if (context) context.sourceCalls += 1;
  };
  return {
    get(resource, namespace, name, options) {
      mark(resource, 'get');
      return source.get(resource, namespace, name, options);
    },
    list(resource, namespace, options) {
      mark(resource, 'list');
      return source.list(resource, namespace, options);
    },
    watch(resource, namespace, options) {
      mark(resource, 'watch');
      return source.watch(resource, namespace, options);
    },
    get state() {
      return source.state;
    },
    start: (signal) => source.start(signal),
    stop: () => source.stop(),
    [Symbol.asyncDispose]: () => source.stop(),
  };
}

export function meteredReader(reader: ObjectReader, metrics: Metrics): ObjectReader {
  return {
    get(resource, namespace, name): Promise<KubeObject> {
      const context = { sourceCalls: 0 };
      return readContext.run(context, async () => {
        try {
          const object = await reader.get(resource, namespace, name);
          metrics.objectRequests.inc({ resource, result: context.sourceCalls > 0 ? 'miss' : 'hit' });
          return object;
        } catch (err) {
          metrics.objectRequests.inc({ resource, result: 'error' });
          throw err;
        }
      });
    },
  };
}
