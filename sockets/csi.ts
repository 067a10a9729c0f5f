/**
 * CSI v1 (github.com/container-storage-interface/spec csi.proto, package
 * `csi.v1`): Identity, Node, Controller (and the alpha GroupController) services
 * served by CSI drivers. The kubelet is a client of Identity and Node.
 */
import type { ProtoGrpcType } from './generated/csi/csi.ts';
import { loadProto } from './load.ts';

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

/** Loads CSI v1 (cached). */
export function loadCsi(): CsiPackage {
  return loadProto<ProtoGrpcType>('csi/v1/csi.proto').csi.v1;
}
