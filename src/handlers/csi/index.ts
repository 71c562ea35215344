export { CsiControllerHandler, createCsiControllerHandler } from './csi-controller-handler.js';
export { CSIPlugin, type CsiDriverView, CsiHandler, createCsiHandler } from './csi-handler.js';
export { CSI_DEFAULTS, csiOptions } from './csi-options.js';
export {
  CSI_ACCESS_MODES,
  CSI_RETRY_AFTER_SECONDS,
  type CsiAccessMode,
  type CsiMountCapability,
  CsiVolumeClient,
  type CsiVolumeStats,
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
