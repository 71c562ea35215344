export { CSIPlugin, type CsiDriverView, CsiHandler, createCsiHandler, csiFacts } from './csi-handler.js';
export { type CsiNodeInfo, queryCsiDriver } from './csi-node-info.js';
export { CSI_DEFAULTS, type CsiHandlerOptions } from './csi-options.js';
export { CSI_LOG_PREFIX, validateCsiVersions } from './csi-versions.js';
export { csiIdentityService, csiNodeService } from './csi-wire.js';
