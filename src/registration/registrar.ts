/**
 * The registrar side of the handshake, and only it: the dial, the liveness
 * probe connection, the plugin-info bounds. A light entry (beside index.ts,
 * which adds the plugin-side server, the example plugin and the grpc-js call
 * helpers): what the plugin manager, executor and registry import, so a
 * plugin node that only registers plugins loads neither grpc-js nor
 * protobuf-es (about 5 MiB of an idle node's heap, issue 20).
 */
export { dialRegistration, openHeldConnection, refusedBeforeDial } from './dial.js';
export {
  clip,
  enforcePluginInfoBounds,
  enforceRecordBudget,
  PLUGIN_INFO_LIMITS,
  recordedBytes,
  refuseUndecodableInfo,
} from './plugin-info-bounds.js';
export { probeConnect } from './probe-connect.js';
