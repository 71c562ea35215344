export { dialRegistration, openHeldConnection } from './dial.js';
export { callExampleInfo } from './example-client.js';
export { createExamplePlugin, ExamplePlugin, type ExamplePluginOptions } from './example-plugin.js';
/** The pluginregistration wire messages, for plugins and tests that speak the protocol by hand. */
export {
  PluginInfoSchema,
  RegistrationStatusResponseSchema,
  RegistrationStatusSchema,
} from './gen/pluginregistration/api_pb.js';
export {
  clip,
  enforcePluginInfoBounds,
  enforceRecordBudget,
  PLUGIN_INFO_LIMITS,
  recordedBytes,
  refuseUndecodableInfo,
} from './plugin-info-bounds.js';
export { probeConnect } from './probe-connect.js';
export {
  createRegistrationServer,
  RegistrationServer,
  type RegistrationServerBehaviour,
  type RegistrationServerOptions,
} from './registration-server.js';
export type {
  DialRegistration,
  HeldConnection,
  RegistrationConnection,
  RegistrationStatus,
} from './types.js';
export { callUnary } from './unary-call.js';
export { unary as unaryMethod, unixTarget } from './wire.js';
