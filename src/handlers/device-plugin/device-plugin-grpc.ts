/**
 * Everything the device manager does over gRPC, in one module it loads when
 * it first needs it (device-manager.ts, legacy-registration-server.ts): the
 * plugin client (dial, GetDevicePluginOptions, ListAndWatch, Allocate), and
 * the legacy Registration service's server side. A daemon whose device
 * plugins never connect loads neither grpc-js nor the generated v1beta1
 * messages (issue 20).
 */
export { create } from '@bufbuild/protobuf';
export { Server, status } from '@grpc/grpc-js';
export { deviceRegistrationService, EmptySchema } from './device-plugin-wire.js';
export { PluginClient } from './plugin-client.js';
