/**
 * The package entry point berth/objects: what a library user needs. package.json
 * "exports" maps the subpath to this file, not to index.ts, which also carries
 * names only berth's own folders use (lint lets other folders in through
 * index.ts; the package does not export it, so users cannot reach them).
 * scripts/api-report.mjs keeps the names and their signatures in api/.
 */
export {
  CHANGE_DETECTION_STRATEGIES,
  type ChangeDetectionStrategy,
  type ConfigMapManager,
  type Container,
  createDirectorySource,
  createMemorySource,
  createObjectManagers,
  type DirectorySource,
  type DirectorySourceOptions,
  type EnvFromSource,
  type EnvVar,
  type GetOptions,
  getConfigMapNames,
  getSecretNames,
  isNotFound,
  type KubeObject,
  type ListOptions,
  type MemorySource,
  type MemorySourceOptions,
  OBJECT_DEFAULTS,
  type ObjectKindStats,
  type ObjectList,
  type ObjectManagers,
  type ObjectManagersOptions,
  type ObjectManagersStats,
  type ObjectMeta,
  type ObjectResource,
  type ObjectSource,
  type Pod,
  type PodSpec,
  type SecretManager,
  type SourceLifecycleHooks,
  sourceLifecycle,
  type Volume,
  type VolumeProjection,
  type WatchEvent,
  type WatchOptions,
} from './index.js';
