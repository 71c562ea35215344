export type {
  ClusterEvent,
  ClusterNode,
  ClusterPlugin,
  ClusterWriterEvent,
  LeaseState,
} from './cluster-events.js';
export { clusterKeys } from './cluster-keys.js';
export { CLUSTER_DEFAULTS, type EtcdConnectionSettings } from './cluster-options.js';
export {
  ClusterReader,
  type ClusterReaderOptions,
  type ClusterViewStatus,
  type PluginFilter,
} from './cluster-reader.js';
export { replayEvents, stripNode, stripPlugin } from './cluster-state.js';
export { ClusterWriter, type ClusterWriterOptions } from './cluster-writer.js';
export { type PluginSource, registryPluginSource } from './plugin-source.js';
