/**
 * @internal The plugin manager's part: the plugin watcher. Exported for berth's own
 * folders, tests and benchmarks; use `berth/plugin-manager` or
 * `berth/plugin-node`, whose surface is stable.
 */
export { createPluginWatcher, PluginWatcher } from './plugin-watcher.js';
export { DEFAULT_RESCAN_INTERVAL_MS } from './plugin-watcher-options.js';
