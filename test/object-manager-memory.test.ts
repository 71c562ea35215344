/** The shared object-manager suite over the in-memory source. */
import { createMemorySource } from '../src/objects/index.js';
import { defineObjectManagerSuite } from './object-manager-suite.js';

defineObjectManagerSuite('memory', async () => {
  const source = createMemorySource();
  return {
    source,
    put: async (resource, obj) => {
      source.put(resource, obj);
    },
    remove: async (resource, namespace, name) => {
      source.remove(resource, namespace, name);
    },
    cleanup: () => source.stop(),
  };
});
