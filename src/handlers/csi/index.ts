export {
  CSI_CONTROLLER,
  CsiControllerHandler,
  type CsiControllerView,
  createCsiControllerHandler,
} from './csi-controller-handler.js';
export { CSIPlugin, type CsiDriverView, CsiHandler, createCsiHandler, csiFacts } from './csi-handler.js';
export { type CsiNodeInfo, queryCsiDriver } from './csi-node-info.js';
export { CSI_DEFAULTS, type CsiHandlerOptions, csiOptions } from './csi-options.js';
export { CSI_LOG_PREFIX, validateCsiVersions } from './csi-versions.js';
export {
  CSI_ACCESS_MODES,
  CSI_RETRY_AFTER_SECONDS,
  type CsiAccessMode,
  type CsiCreatedVolume,
  type CsiMountCapability,
  CsiVolumeClient,
  type CsiVolumeClientOptions,
  type CsiVolumeStats,
  type CsiVolumeUsage,
  csiCallError,
  isUncertainCsiFailure,
  openCsiVolumeClient,
} from './csi-volume-client.js';
export {
  csiControllerMethods,
  csiIdentityService,
  csiNodeService,
  csiNodeVolumeMethods,
} from './csi-wire.js';
// The generated messages a test driver or an example driver needs to answer berth.
export {
  GetPluginInfoResponseSchema,
  NodeGetCapabilitiesResponseSchema,
  NodeGetInfoRequestSchema,
  NodeGetInfoResponseSchema,
  NodeServiceCapability_RPC_Type,
  ProbeResponseSchema,
  TopologySchema,
} from './gen/csi/v1/csi_pb.js';
