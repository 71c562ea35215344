/**
 * The pod-reference manager (kubelet cacheBasedManager), used with either
 * store. Pods are keyed by (namespace, name, uid); registering a pod adds
 * references for the objects it names, unregistering drops them.
 *
 * - 'diff' (v1.29+, default): a re-register touches only references that
 *   changed, so a resync that changes nothing makes no add/delete (and no
 *   TTL-store invalidation, hence no GET storm: kubernetes#120126).
 * - 'readd-all' (v1.26–1.28 parity): add every reference again, then delete
 *   the previous ones; same counts, but every register invalidates.
 * Register and unregister are idempotent and never wait on the source.
 * Unregister drops the references of the pod as it was registered, not of the
 * argument (which may be a newer spec).
 */
import { type PodKey, podKeyString } from './object-key.js';
import { type Pod, validatePod } from './pod.js';
import type { KubeObject } from './source.js';
import type { Store } from './store.js';

export type RegisterMode = 'diff' | 'readd-all';

export interface CacheBasedManagerOptions {
  store: Store;
  getReferencedObjects: (pod: Pod) => Set<string>;
  mode?: RegisterMode;
}

export interface Manager {
  /** Reads an object some registered pod references (the manager does not check which pod asks). */
  getObject(namespace: string, name: string): Promise<KubeObject>;
  /** Registers or updates a pod. Throws BERTH_INVALID_ARGUMENT for a pod without namespace/name/uid. */
  registerPod(pod: Pod): void;
  unregisterPod(pod: Pod): void;
}

export interface RegisteredPod extends PodKey {
  /** The object names the pod referenced when it was (last) registered. */
  objects: string[];
}

export interface CacheBasedManager extends Manager {
  /** Registered pods and what they reference, for introspection (API, tests). */
  registeredPods(): RegisteredPod[];
}

interface Registration {
  key: PodKey;
  names: Set<string>;
}

export function createCacheBasedManager(options: CacheBasedManagerOptions): CacheBasedManager {
  const { store, getReferencedObjects } = options;
  const mode = options.mode ?? 'diff';
  const registered = new Map<string, Registration>();

  return {
    getObject: (namespace, name) => store.get(namespace, name),

    registerPod(pod) {
      const key = validatePod(pod);
      const names = getReferencedObjects(pod);
      const id = podKeyString(key);
      const previous = registered.get(id);
      registered.set(id, { key, names: new Set(names) });
      const { namespace, uid } = key;
      if (mode === 'readd-all') {
        for (const name of names) store.addReference(namespace, name, uid);
        for (const name of previous?.names ?? []) store.deleteReference(namespace, name, uid);
        return;
      }
      // Add before delete, so an object named by both specs never drops to zero in between.
      for (const name of names) {
        if (!previous?.names.has(name)) store.addReference(namespace, name, uid);
      }
      for (const name of previous?.names ?? []) {
        if (!names.has(name)) store.deleteReference(namespace, name, uid);
      }
    },

    unregisterPod(pod) {
      const key = validatePod(pod);
      const id = podKeyString(key);
      const previous = registered.get(id);
      if (previous === undefined) return;
      registered.delete(id);
      for (const name of previous.names) store.deleteReference(key.namespace, name, key.uid);
    },

    registeredPods: () =>
      [...registered.values()].map(({ key, names }) => ({ ...key, objects: [...names].sort() })),
  };
}
