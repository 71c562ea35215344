/**
 * grpc-js service definitions for the device plugin API (package v1beta1),
 * built from the protobuf-es schemas generated from
 * src/registration/proto/deviceplugin/v1beta1/api.proto, so berth's client,
 * its legacy Registration server and the test plugin share one encoding.
 */
import {
  type DescMessage,
  type DescMethod,
  fromBinary,
  type MessageShape,
  toBinary,
} from '@bufbuild/protobuf';
import type { MethodDefinition, ServiceDefinition } from '@grpc/grpc-js';
import {
  AllocateRequestSchema,
  AllocateResponseSchema,
  DevicePlugin,
  DevicePluginOptionsSchema,
  EmptySchema,
  ListAndWatchResponseSchema,
  PreferredAllocationRequestSchema,
  PreferredAllocationResponseSchema,
  PreStartContainerRequestSchema,
  PreStartContainerResponseSchema,
  RegisterRequestSchema,
  Registration,
} from './gen/deviceplugin/v1beta1/api_pb.js';

export {
  AllocateRequestSchema,
  type AllocateResponse,
  AllocateResponseSchema,
  type ContainerAllocateResponse,
  ContainerAllocateResponseSchema,
  type Device as WireDevice,
  DevicePluginOptionsSchema,
  DeviceSchema,
  EmptySchema,
  type ListAndWatchResponse,
  ListAndWatchResponseSchema,
  PreferredAllocationRequestSchema,
  PreferredAllocationResponseSchema,
  PreStartContainerRequestSchema,
  PreStartContainerResponseSchema,
  type RegisterRequest,
  RegisterRequestSchema,
} from './gen/deviceplugin/v1beta1/api_pb.js';

function path(method: DescMethod): string {
  return `/${method.parent.typeName}/${method.name}`;
}

function definition<I extends DescMessage, O extends DescMessage>(
  method: DescMethod,
  input: I,
  output: O,
  responseStream: boolean,
): MethodDefinition<MessageShape<I>, MessageShape<O>> {
  return {
    path: path(method),
    requestStream: false,
    responseStream,
    requestSerialize: (message) => Buffer.from(toBinary(input, message)),
    requestDeserialize: (bytes) => fromBinary(input, bytes),
    responseSerialize: (message) => Buffer.from(toBinary(output, message)),
    responseDeserialize: (bytes) => fromBinary(output, bytes),
    originalName: method.localName,
  };
}

export const registrationMethods = {
  register: definition(Registration.method.register, RegisterRequestSchema, EmptySchema, false),
};
/** `v1beta1.Registration`, served by berth on its kubelet.sock-style socket. */
export const deviceRegistrationService: ServiceDefinition<typeof registrationMethods> = registrationMethods;

export const devicePluginMethods = {
  getDevicePluginOptions: definition(
    DevicePlugin.method.getDevicePluginOptions,
    EmptySchema,
    DevicePluginOptionsSchema,
    false,
  ),
  listAndWatch: definition(DevicePlugin.method.listAndWatch, EmptySchema, ListAndWatchResponseSchema, true),
  getPreferredAllocation: definition(
    DevicePlugin.method.getPreferredAllocation,
    PreferredAllocationRequestSchema,
    PreferredAllocationResponseSchema,
    false,
  ),
  allocate: definition(DevicePlugin.method.allocate, AllocateRequestSchema, AllocateResponseSchema, false),
  preStartContainer: definition(
    DevicePlugin.method.preStartContainer,
    PreStartContainerRequestSchema,
    PreStartContainerResponseSchema,
    false,
  ),
};
/** `v1beta1.DevicePlugin`, served by every device plugin. */
export const devicePluginService: ServiceDefinition<typeof devicePluginMethods> = devicePluginMethods;
