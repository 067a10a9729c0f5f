/**
 * CSI v1 (github.com/container-storage-interface/spec csi.proto, package
 * `csi.v1`): Identity, Node, Controller (and the alpha GroupController) services
 * served by CSI drivers. The kubelet is a client of Identity and Node.
 */
import * as grpc from '@grpc/grpc-js';
import type { ProtoGrpcType } from './generated/csi/csi.ts';
import type { NodeClient } from './generated/csi/csi/v1/Node.ts';
import { unixTarget } from './dial.ts';
import * as csi from './generated/csi/v1/csi.ts';
import { loadProto, type GenericDefinition } from './load.ts';

export type { IdentityClient } from './generated/csi/csi/v1/Identity.ts';
export type { NodeClient, NodeHandlers } from './generated/csi/csi/v1/Node.ts';
export type { ControllerClient } from './generated/csi/csi/v1/Controller.ts';
export type { IdentityHandlers } from './generated/csi/csi/v1/Identity.ts';
export type { NodeGetInfoResponse__Output } from './generated/csi/csi/v1/NodeGetInfoResponse.ts';
export type { NodeGetCapabilitiesResponse__Output } from './generated/csi/csi/v1/NodeGetCapabilitiesResponse.ts';
export type { NodeServiceCapability__Output } from './generated/csi/csi/v1/NodeServiceCapability.ts';
export type { NodeStageVolumeRequest } from './generated/csi/csi/v1/NodeStageVolumeRequest.ts';
export type { NodeUnstageVolumeRequest } from './generated/csi/csi/v1/NodeUnstageVolumeRequest.ts';
export type { NodePublishVolumeRequest } from './generated/csi/csi/v1/NodePublishVolumeRequest.ts';
export type { NodeUnpublishVolumeRequest } from './generated/csi/csi/v1/NodeUnpublishVolumeRequest.ts';
export type { NodeGetVolumeStatsResponse__Output } from './generated/csi/csi/v1/NodeGetVolumeStatsResponse.ts';
export type { VolumeCapability } from './generated/csi/csi/v1/VolumeCapability.ts';
export type { GetPluginInfoResponse__Output } from './generated/csi/csi/v1/GetPluginInfoResponse.ts';
export type { GetPluginCapabilitiesResponse__Output } from './generated/csi/csi/v1/GetPluginCapabilitiesResponse.ts';
export type { ProbeResponse__Output } from './generated/csi/csi/v1/ProbeResponse.ts';

/** The loaded `csi.v1` package. */
export type CsiPackage = ProtoGrpcType['csi']['v1'];

/** The generated services of csi/v1/csi.proto (what {@link loadProto} builds the package from). */
export const SERVICES: readonly GenericDefinition[] = [csi.IdentityDefinition, csi.ControllerDefinition, csi.GroupControllerDefinition, csi.NodeDefinition];

/** Loads CSI v1 (cached). */
export function loadCsi(): CsiPackage {
  return loadProto<ProtoGrpcType>('csi/v1/csi.proto', SERVICES).csi.v1;
}

/** The Node service client of the CSI driver listening on `socketPath` (reconnecting quickly: drivers restart). */
export function csiNodeClient(socketPath: string): NodeClient {
  return new (loadCsi().Node)(unixTarget(socketPath), grpc.credentials.createInsecure(), {
    'grpc.initial_reconnect_backoff_ms': 100,
    'grpc.max_reconnect_backoff_ms': 1000,
  });
}
