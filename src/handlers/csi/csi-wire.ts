/**
 * grpc-js definitions of the CSI methods berth calls (and serves, in tests
 * and the example driver), built from the generated csi.v1 schemas.
 */
import type { ServiceDefinition } from '@grpc/grpc-js';
import { unaryMethod } from '../../registration/index.js';
import {
  GetPluginInfoRequestSchema,
  GetPluginInfoResponseSchema,
  Identity,
  Node,
  NodeGetCapabilitiesRequestSchema,
  NodeGetCapabilitiesResponseSchema,
  NodeGetInfoRequestSchema,
  NodeGetInfoResponseSchema,
  ProbeRequestSchema,
  ProbeResponseSchema,
} from './gen/csi/v1/csi_pb.js';

export const csiIdentityMethods = {
  getPluginInfo: unaryMethod(
    Identity.method.getPluginInfo,
    GetPluginInfoRequestSchema,
    GetPluginInfoResponseSchema,
  ),
  probe: unaryMethod(Identity.method.probe, ProbeRequestSchema, ProbeResponseSchema),
};

export const csiNodeMethods = {
  nodeGetCapabilities: unaryMethod(
    Node.method.nodeGetCapabilities,
    NodeGetCapabilitiesRequestSchema,
    NodeGetCapabilitiesResponseSchema,
  ),
  nodeGetInfo: unaryMethod(Node.method.nodeGetInfo, NodeGetInfoRequestSchema, NodeGetInfoResponseSchema),
};

/** `csi.v1.Identity` (the subset berth uses). */
export const csiIdentityService: ServiceDefinition<typeof csiIdentityMethods> = csiIdentityMethods;
/** `csi.v1.Node` (the subset berth uses). */
export const csiNodeService: ServiceDefinition<typeof csiNodeMethods> = csiNodeMethods;
