export {
  createPluginWatcher,
  PluginWatcher,
  type PluginWatcherState,
} from './plugin-watcher.js';
export { DEFAULT_RESCAN_INTERVAL_MS, type PluginWatcherOptions } from './plugin-watcher-options.js';
