// The handler folder's light entry: nothing here loads grpc-js or protobuf-es (the handlers load
// their calls on first use). What a test or example driver needs to answer berth on the wire is
// csi-wire.ts.
export { CsiControllerHandler, createCsiControllerHandler } from './csi-controller-handler.js';
export { CSIPlugin, type CsiDriverView, CsiHandler, createCsiHandler } from './csi-handler.js';
export { CSI_DEFAULTS, csiOptions } from './csi-options.js';
export { openCsiVolumeClient } from './csi-volume-client.js';
export {
  CSI_ACCESS_MODES,
  CSI_RETRY_AFTER_SECONDS,
  type CsiAccessMode,
  type CsiMountCapability,
  type CsiVolumeClient,
  type CsiVolumeStats,
} from './csi-volume-contract.js';
