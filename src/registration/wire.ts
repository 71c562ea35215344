/**
 * gRPC service definitions for the registration and example APIs, built from
 * the protobuf-es schemas in ./gen so client and server share one encoding.
 * grpc-js only needs a path and four (de)serializers per method; the schemas
 * give us binary protobuf identical to what Go's and Python's stacks produce.
 */

import {
  create,
  type DescMessage,
  type DescMethod,
  fromBinary,
  type MessageShape,
  toBinary,
} from '@bufbuild/protobuf';
import type { MethodDefinition, ServiceDefinition } from '@grpc/grpc-js';
import {
  ExampleRequestSchema as ExampleRequestV1beta1Schema,
  ExampleResponseSchema as ExampleResponseV1beta1Schema,
  Example as ExampleV1beta1,
} from './gen/example/v1beta1/example_pb.js';
import {
  ExampleRequestSchema as ExampleRequestV1beta2Schema,
  ExampleResponseSchema as ExampleResponseV1beta2Schema,
  Example as ExampleV1beta2,
} from './gen/example/v1beta2/example_pb.js';
import {
  InfoRequestSchema,
  PluginInfoSchema,
  Registration,
  RegistrationStatusResponseSchema,
  RegistrationStatusSchema,
} from './gen/pluginregistration/api_pb.js';

import { decodePluginInfo } from './plugin-info-decode.js';
import { EXAMPLE_VERSIONS } from './registration-options.js';

/** `/<package>.<Service>/<Method>`, the HTTP/2 path every gRPC stack uses. */
export function methodPath(method: DescMethod): string {
  return `/${method.parent.typeName}/${method.name}`;
}

/** A grpc-js method definition from the generated descriptors: unary, or with a streamed response. */
export function grpcMethod<I extends DescMessage, O extends DescMessage>(
  method: DescMethod,
  input: I,
  output: O,
  responseStream = false,
): MethodDefinition<MessageShape<I>, MessageShape<O>> {
  return {
    path: methodPath(method),
    requestStream: false,
    responseStream,
    requestSerialize: (message) => Buffer.from(toBinary(input, message)),
    requestDeserialize: (bytes) => fromBinary(input, bytes),
    responseSerialize: (message) => Buffer.from(toBinary(output, message)),
    responseDeserialize: (bytes) => fromBinary(output, bytes),
    originalName: method.localName,
  };
}

export function unary<I extends DescMessage, O extends DescMessage>(
  method: DescMethod,
  input: I,
  output: O,
): MethodDefinition<MessageShape<I>, MessageShape<O>> {
  return grpcMethod(method, input, output);
}

const getInfoMethod = unary(Registration.method.getInfo, InfoRequestSchema, PluginInfoSchema);

export const registrationMethods = {
  getInfo: {
    ...getInfoMethod,
    // Strict on the raw bytes, as Go's protobuf is: invalid UTF-8 fails the
    // call instead of being replaced silently (plugin-info-decode.ts, the
    // decoder the registration client uses too).
    responseDeserialize: (bytes: Buffer) => create(PluginInfoSchema, decodePluginInfo(bytes)),
  },
  notifyRegistrationStatus: unary(
    Registration.method.notifyRegistrationStatus,
    RegistrationStatusSchema,
    RegistrationStatusResponseSchema,
  ),
};

/** `pluginregistration.Registration` (same on the wire for kubelet v1alpha1, v1beta1 and v1). */
export const registrationService: ServiceDefinition<typeof registrationMethods> = registrationMethods;

export const exampleV1beta1Methods = {
  getExampleInfo: unary(
    ExampleV1beta1.method.getExampleInfo,
    ExampleRequestV1beta1Schema,
    ExampleResponseV1beta1Schema,
  ),
};
export const exampleV1beta1Service: ServiceDefinition<typeof exampleV1beta1Methods> = exampleV1beta1Methods;

export const exampleV1beta2Methods = {
  getExampleInfo: unary(
    ExampleV1beta2.method.getExampleInfo,
    ExampleRequestV1beta2Schema,
    ExampleResponseV1beta2Schema,
  ),
};
export const exampleV1beta2Service: ServiceDefinition<typeof exampleV1beta2Methods> = exampleV1beta2Methods;

/** Example API versions the example plugin can serve (kubelet's pluginwatcher test APIs). */
export type ExampleVersion = (typeof EXAMPLE_VERSIONS)[number];
export const exampleVersions: readonly ExampleVersion[] = EXAMPLE_VERSIONS;

export const exampleServices = {
  v1beta1: exampleV1beta1Service,
  v1beta2: exampleV1beta2Service,
} as const;

/** The grpc-js target for a unix socket path (or an already-formed `unix:` target). */
export function unixTarget(pathOrTarget: string): string {
  return pathOrTarget.startsWith('unix:') ? pathOrTarget : `unix:${pathOrTarget}`;
}
