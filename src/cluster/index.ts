export type {
  ClusterEvent,
  ClusterNode,
  ClusterPlugin,
  ClusterWriterEvent,
  LeaseState,
} from './cluster-events.js';
export { type ClusterKeys, clusterKeys, endpointId, type ParsedKey } from './cluster-keys.js';
export { CLUSTER_DEFAULTS, type EtcdConnectionSettings } from './cluster-options.js';
export {
  ClusterReader,
  type ClusterReaderOptions,
  type ClusterViewStatus,
  type PluginFilter,
} from './cluster-reader.js';
export { ClusterState, type RawKey, replayEvents, stripNode, stripPlugin } from './cluster-state.js';
export {
  type HealthState,
  healthOf,
  type NodeRecord,
  type PluginRecord,
  pluginRecord,
} from './cluster-values.js';
export { ClusterWriter, type ClusterWriterOptions, type StopMode } from './cluster-writer.js';
export { type PluginSource, registryPluginSource } from './plugin-source.js';
