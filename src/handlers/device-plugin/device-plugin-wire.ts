/**
 * grpc-js service definitions for the device plugin API (package v1beta1),
 * built from the protobuf-es schemas generated from
 * src/registration/proto/deviceplugin/v1beta1/api.proto, so berth's client,
 * its legacy Registration server and the test plugin share one encoding.
 */
import type { ServiceDefinition } from '@grpc/grpc-js';
import { grpcMethod } from '../../registration/index.js';
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

export const registrationMethods = {
  register: grpcMethod(Registration.method.register, RegisterRequestSchema, EmptySchema, false),
};
/** `v1beta1.Registration`, served by berth on its kubelet.sock-style socket. */
export const deviceRegistrationService: ServiceDefinition<typeof registrationMethods> = registrationMethods;

export const devicePluginMethods = {
  getDevicePluginOptions: grpcMethod(
    DevicePlugin.method.getDevicePluginOptions,
    EmptySchema,
    DevicePluginOptionsSchema,
    false,
  ),
  listAndWatch: grpcMethod(DevicePlugin.method.listAndWatch, EmptySchema, ListAndWatchResponseSchema, true),
  getPreferredAllocation: grpcMethod(
    DevicePlugin.method.getPreferredAllocation,
    PreferredAllocationRequestSchema,
    PreferredAllocationResponseSchema,
    false,
  ),
  allocate: grpcMethod(DevicePlugin.method.allocate, AllocateRequestSchema, AllocateResponseSchema, false),
  preStartContainer: grpcMethod(
    DevicePlugin.method.preStartContainer,
    PreStartContainerRequestSchema,
    PreStartContainerResponseSchema,
    false,
  ),
};
/** `v1beta1.DevicePlugin`, served by every device plugin. */
export const devicePluginService: ServiceDefinition<typeof devicePluginMethods> = devicePluginMethods;
