export {
  createPluginWatcher,
  DEFAULT_RESCAN_INTERVAL_MS,
  PluginWatcher,
  type PluginWatcherOptions,
  type PluginWatcherState,
} from './plugin-watcher.js';
