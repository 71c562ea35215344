/**
 * @internal The plugin manager's part: the desired and actual state of the world. Exported for berth's own
 * folders, tests and benchmarks; use `berth/plugin-manager` or
 * `berth/plugin-node`, whose surface is stable.
 */
export { type ActualStateOfWorldStore, createActualStateOfWorld } from './actual-state.js';
export { createDesiredStateOfWorld, type DesiredStateOfWorldStore } from './desired-state.js';
export type { ActualStateOfWorld, DesiredStateOfWorld, PluginInfo } from './types.js';
