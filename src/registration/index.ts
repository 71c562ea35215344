export { callExampleInfo } from './example-client.js';
export { createExamplePlugin, ExamplePlugin, type ExamplePluginOptions } from './example-plugin.js';
/** The pluginregistration wire messages, for plugins and tests that speak the protocol by hand. */
export {
  PluginInfoSchema,
  RegistrationStatusResponseSchema,
  RegistrationStatusSchema,
} from './gen/pluginregistration/api_pb.js';
/** The registrar side alone (no grpc-js, no protobuf-es) is ./registrar.ts. */
export {
  clip,
  dialRegistration,
  enforcePluginInfoBounds,
  enforceRecordBudget,
  openHeldConnection,
  PLUGIN_INFO_LIMITS,
  probeConnect,
  recordedBytes,
  refuseUndecodableInfo,
} from './registrar.js';
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
export { grpcMethod, unary as unaryMethod, unixTarget } from './wire.js';
