/**
 * The package entry point berth/cluster: what a library user needs. package.json
 * "exports" maps the subpath to this file, not to index.ts, which also carries
 * names only berth's own folders use (lint lets other folders in through
 * index.ts; the package does not export it, so users cannot reach them).
 * scripts/api-report.mjs keeps the names and their signatures in api/.
 */
export {
  type ClusterEvent,
  type ClusterNode,
  type ClusterPlugin,
  ClusterReader,
  type ClusterReaderOptions,
  type ClusterViewStatus,
  ClusterWriter,
  type ClusterWriterEvent,
  type ClusterWriterOptions,
  type EtcdConnectionSettings,
  type LeaseState,
  type PluginFilter,
  type PluginSource,
  registryPluginSource,
} from './index.js';
