/**
 * grpc-js definitions of the CSI methods berth calls (and serves, in tests
 * and the example driver), built from the generated csi.v1 schemas.
 */
import type { ServiceDefinition } from '@grpc/grpc-js';
import { unaryMethod } from '../../registration/index.js';
import {
  Controller,
  ControllerGetCapabilitiesRequestSchema,
  ControllerGetCapabilitiesResponseSchema,
  ControllerPublishVolumeRequestSchema,
  ControllerPublishVolumeResponseSchema,
  ControllerUnpublishVolumeRequestSchema,
  ControllerUnpublishVolumeResponseSchema,
  CreateVolumeRequestSchema,
  CreateVolumeResponseSchema,
  DeleteVolumeRequestSchema,
  DeleteVolumeResponseSchema,
  GetPluginInfoRequestSchema,
  GetPluginInfoResponseSchema,
  Identity,
  Node,
  NodeGetCapabilitiesRequestSchema,
  NodeGetCapabilitiesResponseSchema,
  NodeGetInfoRequestSchema,
  NodeGetInfoResponseSchema,
  NodeGetVolumeStatsRequestSchema,
  NodeGetVolumeStatsResponseSchema,
  NodePublishVolumeRequestSchema,
  NodePublishVolumeResponseSchema,
  NodeStageVolumeRequestSchema,
  NodeStageVolumeResponseSchema,
  NodeUnpublishVolumeRequestSchema,
  NodeUnpublishVolumeResponseSchema,
  NodeUnstageVolumeRequestSchema,
  NodeUnstageVolumeResponseSchema,
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

/** The `csi.v1.Node` volume calls (same service as csiNodeMethods, kept apart so the info-only test drivers need not serve them). */
export const csiNodeVolumeMethods = {
  nodeStageVolume: unaryMethod(
    Node.method.nodeStageVolume,
    NodeStageVolumeRequestSchema,
    NodeStageVolumeResponseSchema,
  ),
  nodeUnstageVolume: unaryMethod(
    Node.method.nodeUnstageVolume,
    NodeUnstageVolumeRequestSchema,
    NodeUnstageVolumeResponseSchema,
  ),
  nodePublishVolume: unaryMethod(
    Node.method.nodePublishVolume,
    NodePublishVolumeRequestSchema,
    NodePublishVolumeResponseSchema,
  ),
  nodeUnpublishVolume: unaryMethod(
    Node.method.nodeUnpublishVolume,
    NodeUnpublishVolumeRequestSchema,
    NodeUnpublishVolumeResponseSchema,
  ),
  nodeGetVolumeStats: unaryMethod(
    Node.method.nodeGetVolumeStats,
    NodeGetVolumeStatsRequestSchema,
    NodeGetVolumeStatsResponseSchema,
  ),
};

/** `csi.v1.Controller` (the subset berth's volumes API uses). */
export const csiControllerMethods = {
  createVolume: unaryMethod(
    Controller.method.createVolume,
    CreateVolumeRequestSchema,
    CreateVolumeResponseSchema,
  ),
  deleteVolume: unaryMethod(
    Controller.method.deleteVolume,
    DeleteVolumeRequestSchema,
    DeleteVolumeResponseSchema,
  ),
  controllerPublishVolume: unaryMethod(
    Controller.method.controllerPublishVolume,
    ControllerPublishVolumeRequestSchema,
    ControllerPublishVolumeResponseSchema,
  ),
  controllerUnpublishVolume: unaryMethod(
    Controller.method.controllerUnpublishVolume,
    ControllerUnpublishVolumeRequestSchema,
    ControllerUnpublishVolumeResponseSchema,
  ),
  controllerGetCapabilities: unaryMethod(
    Controller.method.controllerGetCapabilities,
    ControllerGetCapabilitiesRequestSchema,
    ControllerGetCapabilitiesResponseSchema,
  ),
};

/** `csi.v1.Identity` (the subset berth uses). */
export const csiIdentityService: ServiceDefinition<typeof csiIdentityMethods> = csiIdentityMethods;
/** `csi.v1.Node` (the subset berth uses). */
export const csiNodeService: ServiceDefinition<typeof csiNodeMethods> = csiNodeMethods;

// The generated messages a test driver or an example driver needs to answer berth.
export {
  GetPluginInfoResponseSchema,
  NodeGetCapabilitiesResponseSchema,
  NodeGetInfoRequestSchema,
  NodeGetInfoResponseSchema,
  NodeServiceCapability_RPC_Type,
  ProbeResponseSchema,
  TopologySchema,
} from './gen/csi/v1/csi_pb.js';
