/**
 * berth's reference-counted object manager (the kubelet's secret/configmap
 * managers): pods declare the objects they reference, stores keep exactly
 * those cached (TTL'd GETs or one list/watch per object), sources feed them.
 *
 * The etcd and Kubernetes sources have their own entry points (./etcd.ts,
 * ./kubernetes.ts; package subpaths berth/objects/etcd and
 * berth/objects/kubernetes): their clients take 0.5-1 s to load, which users
 * of the default directory source should not pay.
 */
export { isNotFound } from './errors.js';
export type { Manager } from './manager.js';
export {
  type ConfigMapManager,
  createObjectManagers,
  type ObjectKindStats,
  type ObjectManagers,
  type ObjectManagersOptions,
  type ObjectManagersStats,
  type SecretManager,
} from './object-managers.js';
export {
  CHANGE_DETECTION_STRATEGIES,
  type ChangeDetectionStrategy,
  DEFAULT_CHANGE_DETECTION_STRATEGY,
  DEFAULT_MAX_POD_BYTES,
  DEFAULT_MAX_PODS,
  DEFAULT_MAX_REFERENCES_PER_POD,
  DEFAULT_OBJECT_TTL_MS,
  OBJECT_DEFAULTS,
} from './objects-options.js';
export type { Container, EnvFromSource, EnvVar, Pod, PodSpec, Volume, VolumeProjection } from './pod.js';
export { getConfigMapNames, getSecretNames } from './references.js';
export type {
  GetOptions,
  KubeObject,
  ListOptions,
  ObjectList,
  ObjectMeta,
  ObjectResource,
  ObjectSource,
  WatchEvent,
  WatchOptions,
} from './source.js';
export {
  createDirectorySource,
  type DirectorySource,
  type DirectorySourceOptions,
} from './sources/directory-source.js';
export { createMemorySource, type MemorySource, type MemorySourceOptions } from './sources/memory-source.js';
/** For sources of your own: the lifecycle every ObjectSource follows. */
export { type SourceLifecycleHooks, sourceLifecycle } from './sources/source-lifecycle.js';
/** @internal The stores behind createObjectManagers (benchmarks use them directly). */
export { createTtlStore } from './ttl-store.js';
/** @internal */
export { createWatchBasedManager } from './watch-based-manager.js';
/** @internal */
export { createWatchStore, WatchStore } from './watch-store.js';
