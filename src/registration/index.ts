export { dialRegistration } from './dial.js';
export { callExampleInfo } from './example-client.js';
export { createExamplePlugin, ExamplePlugin, type ExamplePluginOptions } from './example-plugin.js';
/** The pluginregistration wire messages, for plugins and tests that speak the protocol by hand. */
export {
  PluginInfoSchema,
  RegistrationStatusResponseSchema,
  RegistrationStatusSchema,
} from './gen/pluginregistration/api_pb.js';
export {
  checkPluginInfoWire,
  clip,
  enforcePluginInfoBounds,
  enforceRecordBudget,
  PLUGIN_INFO_LIMITS,
  pluginInfoProblem,
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
  CallOptions,
  DialRegistration,
  RegistrationConnection,
  RegistrationInfo,
  RegistrationStatus,
} from './types.js';
export { callUnary } from './unary-call.js';
export {
  type ExampleVersion,
  exampleVersions,
  methodPath,
  unary as unaryMethod,
  unixTarget,
} from './wire.js';
