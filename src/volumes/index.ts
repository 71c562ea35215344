export { createPodVolumeHook, type PodVolumeHook } from './pod-inline-volumes.js';
export { VolumeManager } from './volume-manager.js';
export { VOLUMES_DEFAULTS } from './volumes-options.js';
