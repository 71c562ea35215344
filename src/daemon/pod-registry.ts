import { BerthError } from '../common/index.js';
import type { PodDocument, PodRegistry, PodSummary } from './api/api-types.js';

/** The object manager's pod side: registering a pod registers it with the secret and configmap managers. */
export interface PodReferenceManager {
  registerPod(pod: PodDocument): void;
  unregisterPod(pod: PodDocument): void;
}

export interface PodRegistryOptions {
  manager: PodReferenceManager;
  /** The names a pod references (the object manager's extractors); shown by GET /v1/pods. */
  secretNames(pod: PodDocument): Iterable<string>;
  configMapNames(pod: PodDocument): Iterable<string>;
  /** Pods registered at once (`objects.maxPods`); a new one over it is refused. */
  maxPods: number;
  /** Distinct secrets plus configmaps one pod may reference (`objects.maxReferencesPerPod`). */
  maxReferencesPerPod: number;
}

/**
 * The pods registered through the API, by namespace/name. The object managers
 * key pods by UID as the kubelet does; the API addresses them by path, so a
 * PUT with a new UID for the same namespace/name replaces the old pod
 * (unregistered first, so its references are released).
 */
export function createPodRegistry(options: PodRegistryOptions): PodRegistry {
  const pods = new Map<string, PodDocument>();
  const keyOf = (namespace: string, name: string) => `${namespace}/${name}`;
  const summary = (pod: PodDocument): PodSummary => ({
    namespace: pod.metadata.namespace,
    name: pod.metadata.name,
    uid: pod.metadata.uid,
    secrets: [...new Set(options.secretNames(pod))].sort(),
    configMaps: [...new Set(options.configMapNames(pod))].sort(),
  });

  return {
    apply(pod) {
      const key = keyOf(pod.metadata.namespace, pod.metadata.name);
      const previous = pods.get(key);
      // Checked before anything is registered: a refused pod costs nothing.
      const references = new Set(options.secretNames(pod)).size + new Set(options.configMapNames(pod)).size;
      if (references > options.maxReferencesPerPod) {
        throw new BerthError(
          'BERTH_LIMIT_EXCEEDED',
          `pod ${key} references ${references} secrets and configmaps, more than objects.maxReferencesPerPod (${options.maxReferencesPerPod})`,
          {
            details: {
              limit: 'objects.maxReferencesPerPod',
              max: options.maxReferencesPerPod,
              got: references,
            },
          },
        );
      }
      if (previous === undefined && pods.size >= options.maxPods) {
        throw new BerthError(
          'BERTH_LIMIT_EXCEEDED',
          `${pods.size} pods are registered, the most objects.maxPods (${options.maxPods}) allows; delete one first`,
          { details: { limit: 'objects.maxPods', max: options.maxPods } },
        );
      }
      if (previous && previous.metadata.uid !== pod.metadata.uid) options.manager.unregisterPod(previous);
      options.manager.registerPod(pod);
      pods.set(key, pod);
      return summary(pod);
    },
    delete(namespace, name) {
      const key = keyOf(namespace, name);
      const pod = pods.get(key);
      if (!pod) return undefined;
      pods.delete(key);
      options.manager.unregisterPod(pod);
      return summary(pod);
    },
    list() {
      return [...pods.values()]
        .map(summary)
        .sort((a, b) => a.namespace.localeCompare(b.namespace) || a.name.localeCompare(b.name));
    },
  };
}
