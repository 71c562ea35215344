export { dialRegistration } from './dial.js';
export { callExampleInfo } from './example-client.js';
export {
  createExamplePlugin,
  ExamplePlugin,
  type ExamplePluginOptions,
  newTestExamplePlugin,
} from './example-plugin.js';
export {
  checkPluginInfoWire,
  clip,
  enforcePluginInfoBounds,
  PLUGIN_INFO_LIMITS,
  pluginInfoProblem,
  refuseUndecodableInfo,
} from './plugin-info-bounds.js';
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
export { type ExampleVersion, exampleVersions, methodPath } from './wire.js';
