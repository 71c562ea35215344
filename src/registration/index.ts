export { dialRegistration } from './dial.js';
export { callExampleInfo } from './example-client.js';
export { createExamplePlugin, ExamplePlugin, type ExamplePluginOptions } from './example-plugin.js';
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
