export { type MountTable, parseMountPoints, readMountTable } from './mount-table.js';
export {
  createPodVolumeHook,
  ephemeralVolumeId,
  type InlineVolumePod,
  inlineVolumesOf,
  type PodVolumeHook,
} from './pod-inline-volumes.js';
export type {
  CreatedVolumeView,
  CreateVolumeRequest,
  CsiDriverDirectory,
  CsiDriverEndpoint,
  PodVolumeView,
  PublicationStatus,
  PublicationView,
  PublishOptions,
  PublishRequest,
  PublishResult,
  VolumeView,
} from './types.js';
export { VolumeManager, type VolumeManagerOptions } from './volume-manager.js';
export { checkPathComponent, MAX_NAME_BYTES, volumePaths } from './volume-paths.js';
export { VOLUMES_DEFAULTS } from './volumes-options.js';
