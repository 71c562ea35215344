export {
  type ActualStateOfWorldOptions,
  type ActualStateOfWorldStore,
  createActualStateOfWorld,
} from './actual-state.js';
export {
  createDesiredStateOfWorld,
  type DesiredStateOfWorldOptions,
  type DesiredStateOfWorldStore,
} from './desired-state.js';
export type { ActualStateOfWorld, DesiredStateOfWorld, PluginInfo } from './types.js';
