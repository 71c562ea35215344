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
export {
  generateError,
  generateErrorDetailed,
  generateMsg,
  generateMsgDetailed,
} from './plugin-info-messages.js';
export type { ActualStateOfWorld, DesiredStateOfWorld, PluginInfo } from './types.js';
