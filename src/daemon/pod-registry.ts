import { BerthError } from '../common/index.js';
import type { PodDocument, PodRegistry, PodSummary, PodVolume } from './api/api-types.js';

/** The object manager's pod side: registering a pod registers it with the secret and configmap managers. */
export interface PodReferenceManager {
  registerPod(pod: PodDocument): void;
  unregisterPod(pod: PodDocument): void;
}

/** The CSI side of a pod: its ephemeral inline volumes (volumes/'s PodVolumeHook, wired by the daemon). */
export interface PodVolumePublisher {
  publish(pod: PodDocument): Promise<PodVolume[]>;
  unpublish(pod: PodDocument): Promise<void>;
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
  /** Publishes a pod's CSI inline volumes on apply and unpublishes them on delete; absent: none. */
  volumes?: PodVolumePublisher;
}

interface Entry {
  pod: PodDocument;
  volumes: PodVolume[];
}

/**
 * The pods registered through the API, by namespace/name. The object managers
 * key pods by UID as the kubelet does; the API addresses them by path, so a
 * PUT with a new UID for the same namespace/name replaces the old pod
 * (unregistered first, so its references are released and its inline
 * volumes unpublished). An apply whose volumes cannot all be published
 * registers nothing and leaves no volume published. Operations on one
 * namespace/name run one at a time.
 */
export function createPodRegistry(options: PodRegistryOptions): PodRegistry {
  const pods = new Map<string, Entry>();
  const tails = new Map<string, Promise<unknown>>();
  const keyOf = (namespace: string, name: string) => `${namespace}/${name}`;
  const summary = ({ pod, volumes }: Entry): PodSummary => ({
    namespace: pod.metadata.namespace,
    name: pod.metadata.name,
    uid: pod.metadata.uid,
    secrets: [...new Set(options.secretNames(pod))].sort(),
    configMaps: [...new Set(options.configMapNames(pod))].sort(),
    podVolumes: volumes,
  });
  const serial = <T>(key: string, task: () => Promise<T>): Promise<T> => {
    const run = (tails.get(key) ?? Promise.resolve()).then(task, task);
    const tail = run.then(
      () => undefined,
      () => undefined,
    );
    tails.set(key, tail);
    void tail.then(() => {
      if (tails.get(key) === tail) tails.delete(key);
    });
    return run;
  };

  return {
    apply(pod) {
      const key = keyOf(pod.metadata.namespace, pod.metadata.name);
      return serial(key, async () => {
        const previous = pods.get(key);
        // Checked before anything is registered or published: a refused pod costs nothing.
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
        if (previous && previous.pod.metadata.uid !== pod.metadata.uid) {
          await options.volumes?.unpublish(previous.pod);
          pods.delete(key);
          options.manager.unregisterPod(previous.pod);
        }
        // Publish first: a pod whose volumes fail is not registered at all.
        const volumes = (await options.volumes?.publish(pod)) ?? [];
        options.manager.registerPod(pod);
        const entry = { pod, volumes };
        pods.set(key, entry);
        return summary(entry);
      });
    },
    delete(namespace, name) {
      const key = keyOf(namespace, name);
      return serial(key, async () => {
        const entry = pods.get(key);
        if (!entry) return undefined;
        // Kept registered if its volumes cannot be unpublished yet (a DELETE again retries).
        await options.volumes?.unpublish(entry.pod);
        pods.delete(key);
        options.manager.unregisterPod(entry.pod);
        return summary(entry);
      });
    },
    list() {
      return [...pods.values()]
        .map(summary)
        .sort((a, b) => a.namespace.localeCompare(b.namespace) || a.name.localeCompare(b.name));
    },
  };
}
