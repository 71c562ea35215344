export { createPluginNode, type PluginNode } from './plugin-node.js';
export {
  DEFAULT_RESTORE_SETTLE_TIMEOUT_MS,
  type HandlerFactory,
  type PluginNodeOptions,
} from './plugin-node-options.js';
export { type RestoreSettleOptions, type SettleState, waitForRestoredSockets } from './restore-settle.js';
