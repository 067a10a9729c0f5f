import type * as grpc from '@grpc/grpc-js';
import type { EnumTypeDefinition, MessageTypeDefinition } from '@grpc/proto-loader';

import type { CapacityRange as _csi_v1_CapacityRange, CapacityRange__Output as _csi_v1_CapacityRange__Output } from './csi/v1/CapacityRange.ts';
import type { ControllerClient as _csi_v1_ControllerClient, ControllerDefinition as _csi_v1_ControllerDefinition } from './csi/v1/Controller.ts';
import type { ControllerExpandVolumeRequest as _csi_v1_ControllerExpandVolumeRequest, ControllerExpandVolumeRequest__Output as _csi_v1_ControllerExpandVolumeRequest__Output } from './csi/v1/ControllerExpandVolumeRequest.ts';
import type { ControllerExpandVolumeResponse as _csi_v1_ControllerExpandVolumeResponse, ControllerExpandVolumeResponse__Output as _csi_v1_ControllerExpandVolumeResponse__Output } from './csi/v1/ControllerExpandVolumeResponse.ts';
import type { ControllerGetCapabilitiesRequest as _csi_v1_ControllerGetCapabilitiesRequest, ControllerGetCapabilitiesRequest__Output as _csi_v1_ControllerGetCapabilitiesRequest__Output } from './csi/v1/ControllerGetCapabilitiesRequest.ts';
import type { ControllerGetCapabilitiesResponse as _csi_v1_ControllerGetCapabilitiesResponse, ControllerGetCapabilitiesResponse__Output as _csi_v1_ControllerGetCapabilitiesResponse__Output } from './csi/v1/ControllerGetCapabilitiesResponse.ts';
import type { ControllerGetVolumeRequest as _csi_v1_ControllerGetVolumeRequest, ControllerGetVolumeRequest__Output as _csi_v1_ControllerGetVolumeRequest__Output } from './csi/v1/ControllerGetVolumeRequest.ts';
import type { ControllerGetVolumeResponse as _csi_v1_ControllerGetVolumeResponse, ControllerGetVolumeResponse__Output as _csi_v1_ControllerGetVolumeResponse__Output } from './csi/v1/ControllerGetVolumeResponse.ts';
import type { ControllerModifyVolumeRequest as _csi_v1_ControllerModifyVolumeRequest, ControllerModifyVolumeRequest__Output as _csi_v1_ControllerModifyVolumeRequest__Output } from './csi/v1/ControllerModifyVolumeRequest.ts';
import type { ControllerModifyVolumeResponse as _csi_v1_ControllerModifyVolumeResponse, ControllerModifyVolumeResponse__Output as _csi_v1_ControllerModifyVolumeResponse__Output } from './csi/v1/ControllerModifyVolumeResponse.ts';
import type { ControllerPublishVolumeRequest as _csi_v1_ControllerPublishVolumeRequest, ControllerPublishVolumeRequest__Output as _csi_v1_ControllerPublishVolumeRequest__Output } from './csi/v1/ControllerPublishVolumeRequest.ts';
import type { ControllerPublishVolumeResponse as _csi_v1_ControllerPublishVolumeResponse, ControllerPublishVolumeResponse__Output as _csi_v1_ControllerPublishVolumeResponse__Output } from './csi/v1/ControllerPublishVolumeResponse.ts';
import type { ControllerServiceCapability as _csi_v1_ControllerServiceCapability, ControllerServiceCapability__Output as _csi_v1_ControllerServiceCapability__Output } from './csi/v1/ControllerServiceCapability.ts';
import type { ControllerUnpublishVolumeRequest as _csi_v1_ControllerUnpublishVolumeRequest, ControllerUnpublishVolumeRequest__Output as _csi_v1_ControllerUnpublishVolumeRequest__Output } from './csi/v1/ControllerUnpublishVolumeRequest.ts';
import type { ControllerUnpublishVolumeResponse as _csi_v1_ControllerUnpublishVolumeResponse, ControllerUnpublishVolumeResponse__Output as _csi_v1_ControllerUnpublishVolumeResponse__Output } from './csi/v1/ControllerUnpublishVolumeResponse.ts';
import type { CreateSnapshotRequest as _csi_v1_CreateSnapshotRequest, CreateSnapshotRequest__Output as _csi_v1_CreateSnapshotRequest__Output } from './csi/v1/CreateSnapshotRequest.ts';
import type { CreateSnapshotResponse as _csi_v1_CreateSnapshotResponse, CreateSnapshotResponse__Output as _csi_v1_CreateSnapshotResponse__Output } from './csi/v1/CreateSnapshotResponse.ts';
import type { CreateVolumeGroupSnapshotRequest as _csi_v1_CreateVolumeGroupSnapshotRequest, CreateVolumeGroupSnapshotRequest__Output as _csi_v1_CreateVolumeGroupSnapshotRequest__Output } from './csi/v1/CreateVolumeGroupSnapshotRequest.ts';
import type { CreateVolumeGroupSnapshotResponse as _csi_v1_CreateVolumeGroupSnapshotResponse, CreateVolumeGroupSnapshotResponse__Output as _csi_v1_CreateVolumeGroupSnapshotResponse__Output } from './csi/v1/CreateVolumeGroupSnapshotResponse.ts';
import type { CreateVolumeRequest as _csi_v1_CreateVolumeRequest, CreateVolumeRequest__Output as _csi_v1_CreateVolumeRequest__Output } from './csi/v1/CreateVolumeRequest.ts';
import type { CreateVolumeResponse as _csi_v1_CreateVolumeResponse, CreateVolumeResponse__Output as _csi_v1_CreateVolumeResponse__Output } from './csi/v1/CreateVolumeResponse.ts';
import type { DeleteSnapshotRequest as _csi_v1_DeleteSnapshotRequest, DeleteSnapshotRequest__Output as _csi_v1_DeleteSnapshotRequest__Output } from './csi/v1/DeleteSnapshotRequest.ts';
import type { DeleteSnapshotResponse as _csi_v1_DeleteSnapshotResponse, DeleteSnapshotResponse__Output as _csi_v1_DeleteSnapshotResponse__Output } from './csi/v1/DeleteSnapshotResponse.ts';
import type { DeleteVolumeGroupSnapshotRequest as _csi_v1_DeleteVolumeGroupSnapshotRequest, DeleteVolumeGroupSnapshotRequest__Output as _csi_v1_DeleteVolumeGroupSnapshotRequest__Output } from './csi/v1/DeleteVolumeGroupSnapshotRequest.ts';
import type { DeleteVolumeGroupSnapshotResponse as _csi_v1_DeleteVolumeGroupSnapshotResponse, DeleteVolumeGroupSnapshotResponse__Output as _csi_v1_DeleteVolumeGroupSnapshotResponse__Output } from './csi/v1/DeleteVolumeGroupSnapshotResponse.ts';
import type { DeleteVolumeRequest as _csi_v1_DeleteVolumeRequest, DeleteVolumeRequest__Output as _csi_v1_DeleteVolumeRequest__Output } from './csi/v1/DeleteVolumeRequest.ts';
import type { DeleteVolumeResponse as _csi_v1_DeleteVolumeResponse, DeleteVolumeResponse__Output as _csi_v1_DeleteVolumeResponse__Output } from './csi/v1/DeleteVolumeResponse.ts';
import type { GetCapacityRequest as _csi_v1_GetCapacityRequest, GetCapacityRequest__Output as _csi_v1_GetCapacityRequest__Output } from './csi/v1/GetCapacityRequest.ts';
import type { GetCapacityResponse as _csi_v1_GetCapacityResponse, GetCapacityResponse__Output as _csi_v1_GetCapacityResponse__Output } from './csi/v1/GetCapacityResponse.ts';
import type { GetPluginCapabilitiesRequest as _csi_v1_GetPluginCapabilitiesRequest, GetPluginCapabilitiesRequest__Output as _csi_v1_GetPluginCapabilitiesRequest__Output } from './csi/v1/GetPluginCapabilitiesRequest.ts';
import type { GetPluginCapabilitiesResponse as _csi_v1_GetPluginCapabilitiesResponse, GetPluginCapabilitiesResponse__Output as _csi_v1_GetPluginCapabilitiesResponse__Output } from './csi/v1/GetPluginCapabilitiesResponse.ts';
import type { GetPluginInfoRequest as _csi_v1_GetPluginInfoRequest, GetPluginInfoRequest__Output as _csi_v1_GetPluginInfoRequest__Output } from './csi/v1/GetPluginInfoRequest.ts';
import type { GetPluginInfoResponse as _csi_v1_GetPluginInfoResponse, GetPluginInfoResponse__Output as _csi_v1_GetPluginInfoResponse__Output } from './csi/v1/GetPluginInfoResponse.ts';
import type { GetVolumeGroupSnapshotRequest as _csi_v1_GetVolumeGroupSnapshotRequest, GetVolumeGroupSnapshotRequest__Output as _csi_v1_GetVolumeGroupSnapshotRequest__Output } from './csi/v1/GetVolumeGroupSnapshotRequest.ts';
import type { GetVolumeGroupSnapshotResponse as _csi_v1_GetVolumeGroupSnapshotResponse, GetVolumeGroupSnapshotResponse__Output as _csi_v1_GetVolumeGroupSnapshotResponse__Output } from './csi/v1/GetVolumeGroupSnapshotResponse.ts';
import type { GroupControllerClient as _csi_v1_GroupControllerClient, GroupControllerDefinition as _csi_v1_GroupControllerDefinition } from './csi/v1/GroupController.ts';
import type { GroupControllerGetCapabilitiesRequest as _csi_v1_GroupControllerGetCapabilitiesRequest, GroupControllerGetCapabilitiesRequest__Output as _csi_v1_GroupControllerGetCapabilitiesRequest__Output } from './csi/v1/GroupControllerGetCapabilitiesRequest.ts';
import type { GroupControllerGetCapabilitiesResponse as _csi_v1_GroupControllerGetCapabilitiesResponse, GroupControllerGetCapabilitiesResponse__Output as _csi_v1_GroupControllerGetCapabilitiesResponse__Output } from './csi/v1/GroupControllerGetCapabilitiesResponse.ts';
import type { GroupControllerServiceCapability as _csi_v1_GroupControllerServiceCapability, GroupControllerServiceCapability__Output as _csi_v1_GroupControllerServiceCapability__Output } from './csi/v1/GroupControllerServiceCapability.ts';
import type { IdentityClient as _csi_v1_IdentityClient, IdentityDefinition as _csi_v1_IdentityDefinition } from './csi/v1/Identity.ts';
import type { ListSnapshotsRequest as _csi_v1_ListSnapshotsRequest, ListSnapshotsRequest__Output as _csi_v1_ListSnapshotsRequest__Output } from './csi/v1/ListSnapshotsRequest.ts';
import type { ListSnapshotsResponse as _csi_v1_ListSnapshotsResponse, ListSnapshotsResponse__Output as _csi_v1_ListSnapshotsResponse__Output } from './csi/v1/ListSnapshotsResponse.ts';
import type { ListVolumesRequest as _csi_v1_ListVolumesRequest, ListVolumesRequest__Output as _csi_v1_ListVolumesRequest__Output } from './csi/v1/ListVolumesRequest.ts';
import type { ListVolumesResponse as _csi_v1_ListVolumesResponse, ListVolumesResponse__Output as _csi_v1_ListVolumesResponse__Output } from './csi/v1/ListVolumesResponse.ts';
import type { NodeClient as _csi_v1_NodeClient, NodeDefinition as _csi_v1_NodeDefinition } from './csi/v1/Node.ts';
import type { NodeExpandVolumeRequest as _csi_v1_NodeExpandVolumeRequest, NodeExpandVolumeRequest__Output as _csi_v1_NodeExpandVolumeRequest__Output } from './csi/v1/NodeExpandVolumeRequest.ts';
import type { NodeExpandVolumeResponse as _csi_v1_NodeExpandVolumeResponse, NodeExpandVolumeResponse__Output as _csi_v1_NodeExpandVolumeResponse__Output } from './csi/v1/NodeExpandVolumeResponse.ts';
import type { NodeGetCapabilitiesRequest as _csi_v1_NodeGetCapabilitiesRequest, NodeGetCapabilitiesRequest__Output as _csi_v1_NodeGetCapabilitiesRequest__Output } from './csi/v1/NodeGetCapabilitiesRequest.ts';
import type { NodeGetCapabilitiesResponse as _csi_v1_NodeGetCapabilitiesResponse, NodeGetCapabilitiesResponse__Output as _csi_v1_NodeGetCapabilitiesResponse__Output } from './csi/v1/NodeGetCapabilitiesResponse.ts';
import type { NodeGetInfoRequest as _csi_v1_NodeGetInfoRequest, NodeGetInfoRequest__Output as _csi_v1_NodeGetInfoRequest__Output } from './csi/v1/NodeGetInfoRequest.ts';
import type { NodeGetInfoResponse as _csi_v1_NodeGetInfoResponse, NodeGetInfoResponse__Output as _csi_v1_NodeGetInfoResponse__Output } from './csi/v1/NodeGetInfoResponse.ts';
import type { NodeGetVolumeStatsRequest as _csi_v1_NodeGetVolumeStatsRequest, NodeGetVolumeStatsRequest__Output as _csi_v1_NodeGetVolumeStatsRequest__Output } from './csi/v1/NodeGetVolumeStatsRequest.ts';
import type { NodeGetVolumeStatsResponse as _csi_v1_NodeGetVolumeStatsResponse, NodeGetVolumeStatsResponse__Output as _csi_v1_NodeGetVolumeStatsResponse__Output } from './csi/v1/NodeGetVolumeStatsResponse.ts';
import type { NodePublishVolumeRequest as _csi_v1_NodePublishVolumeRequest, NodePublishVolumeRequest__Output as _csi_v1_NodePublishVolumeRequest__Output } from './csi/v1/NodePublishVolumeRequest.ts';
import type { NodePublishVolumeResponse as _csi_v1_NodePublishVolumeResponse, NodePublishVolumeResponse__Output as _csi_v1_NodePublishVolumeResponse__Output } from './csi/v1/NodePublishVolumeResponse.ts';
import type { NodeServiceCapability as _csi_v1_NodeServiceCapability, NodeServiceCapability__Output as _csi_v1_NodeServiceCapability__Output } from './csi/v1/NodeServiceCapability.ts';
import type { NodeStageVolumeRequest as _csi_v1_NodeStageVolumeRequest, NodeStageVolumeRequest__Output as _csi_v1_NodeStageVolumeRequest__Output } from './csi/v1/NodeStageVolumeRequest.ts';
import type { NodeStageVolumeResponse as _csi_v1_NodeStageVolumeResponse, NodeStageVolumeResponse__Output as _csi_v1_NodeStageVolumeResponse__Output } from './csi/v1/NodeStageVolumeResponse.ts';
import type { NodeUnpublishVolumeRequest as _csi_v1_NodeUnpublishVolumeRequest, NodeUnpublishVolumeRequest__Output as _csi_v1_NodeUnpublishVolumeRequest__Output } from './csi/v1/NodeUnpublishVolumeRequest.ts';
import type { NodeUnpublishVolumeResponse as _csi_v1_NodeUnpublishVolumeResponse, NodeUnpublishVolumeResponse__Output as _csi_v1_NodeUnpublishVolumeResponse__Output } from './csi/v1/NodeUnpublishVolumeResponse.ts';
import type { NodeUnstageVolumeRequest as _csi_v1_NodeUnstageVolumeRequest, NodeUnstageVolumeRequest__Output as _csi_v1_NodeUnstageVolumeRequest__Output } from './csi/v1/NodeUnstageVolumeRequest.ts';
import type { NodeUnstageVolumeResponse as _csi_v1_NodeUnstageVolumeResponse, NodeUnstageVolumeResponse__Output as _csi_v1_NodeUnstageVolumeResponse__Output } from './csi/v1/NodeUnstageVolumeResponse.ts';
import type { PluginCapability as _csi_v1_PluginCapability, PluginCapability__Output as _csi_v1_PluginCapability__Output } from './csi/v1/PluginCapability.ts';
import type { ProbeRequest as _csi_v1_ProbeRequest, ProbeRequest__Output as _csi_v1_ProbeRequest__Output } from './csi/v1/ProbeRequest.ts';
import type { ProbeResponse as _csi_v1_ProbeResponse, ProbeResponse__Output as _csi_v1_ProbeResponse__Output } from './csi/v1/ProbeResponse.ts';
import type { Snapshot as _csi_v1_Snapshot, Snapshot__Output as _csi_v1_Snapshot__Output } from './csi/v1/Snapshot.ts';
import type { Topology as _csi_v1_Topology, Topology__Output as _csi_v1_Topology__Output } from './csi/v1/Topology.ts';
import type { TopologyRequirement as _csi_v1_TopologyRequirement, TopologyRequirement__Output as _csi_v1_TopologyRequirement__Output } from './csi/v1/TopologyRequirement.ts';
import type { ValidateVolumeCapabilitiesRequest as _csi_v1_ValidateVolumeCapabilitiesRequest, ValidateVolumeCapabilitiesRequest__Output as _csi_v1_ValidateVolumeCapabilitiesRequest__Output } from './csi/v1/ValidateVolumeCapabilitiesRequest.ts';
import type { ValidateVolumeCapabilitiesResponse as _csi_v1_ValidateVolumeCapabilitiesResponse, ValidateVolumeCapabilitiesResponse__Output as _csi_v1_ValidateVolumeCapabilitiesResponse__Output } from './csi/v1/ValidateVolumeCapabilitiesResponse.ts';
import type { Volume as _csi_v1_Volume, Volume__Output as _csi_v1_Volume__Output } from './csi/v1/Volume.ts';
import type { VolumeCapability as _csi_v1_VolumeCapability, VolumeCapability__Output as _csi_v1_VolumeCapability__Output } from './csi/v1/VolumeCapability.ts';
import type { VolumeCondition as _csi_v1_VolumeCondition, VolumeCondition__Output as _csi_v1_VolumeCondition__Output } from './csi/v1/VolumeCondition.ts';
import type { VolumeContentSource as _csi_v1_VolumeContentSource, VolumeContentSource__Output as _csi_v1_VolumeContentSource__Output } from './csi/v1/VolumeContentSource.ts';
import type { VolumeGroupSnapshot as _csi_v1_VolumeGroupSnapshot, VolumeGroupSnapshot__Output as _csi_v1_VolumeGroupSnapshot__Output } from './csi/v1/VolumeGroupSnapshot.ts';
import type { VolumeUsage as _csi_v1_VolumeUsage, VolumeUsage__Output as _csi_v1_VolumeUsage__Output } from './csi/v1/VolumeUsage.ts';
import type { BoolValue as _google_protobuf_BoolValue, BoolValue__Output as _google_protobuf_BoolValue__Output } from './google/protobuf/BoolValue.ts';
import type { BytesValue as _google_protobuf_BytesValue, BytesValue__Output as _google_protobuf_BytesValue__Output } from './google/protobuf/BytesValue.ts';
import type { DescriptorProto as _google_protobuf_DescriptorProto, DescriptorProto__Output as _google_protobuf_DescriptorProto__Output } from './google/protobuf/DescriptorProto.ts';
import type { DoubleValue as _google_protobuf_DoubleValue, DoubleValue__Output as _google_protobuf_DoubleValue__Output } from './google/protobuf/DoubleValue.ts';
import type { EnumDescriptorProto as _google_protobuf_EnumDescriptorProto, EnumDescriptorProto__Output as _google_protobuf_EnumDescriptorProto__Output } from './google/protobuf/EnumDescriptorProto.ts';
import type { EnumOptions as _google_protobuf_EnumOptions, EnumOptions__Output as _google_protobuf_EnumOptions__Output } from './google/protobuf/EnumOptions.ts';
import type { EnumValueDescriptorProto as _google_protobuf_EnumValueDescriptorProto, EnumValueDescriptorProto__Output as _google_protobuf_EnumValueDescriptorProto__Output } from './google/protobuf/EnumValueDescriptorProto.ts';
import type { EnumValueOptions as _google_protobuf_EnumValueOptions, EnumValueOptions__Output as _google_protobuf_EnumValueOptions__Output } from './google/protobuf/EnumValueOptions.ts';
import type { ExtensionRangeOptions as _google_protobuf_ExtensionRangeOptions, ExtensionRangeOptions__Output as _google_protobuf_ExtensionRangeOptions__Output } from './google/protobuf/ExtensionRangeOptions.ts';
import type { FeatureSet as _google_protobuf_FeatureSet, FeatureSet__Output as _google_protobuf_FeatureSet__Output } from './google/protobuf/FeatureSet.ts';
import type { FeatureSetDefaults as _google_protobuf_FeatureSetDefaults, FeatureSetDefaults__Output as _google_protobuf_FeatureSetDefaults__Output } from './google/protobuf/FeatureSetDefaults.ts';
import type { FieldDescriptorProto as _google_protobuf_FieldDescriptorProto, FieldDescriptorProto__Output as _google_protobuf_FieldDescriptorProto__Output } from './google/protobuf/FieldDescriptorProto.ts';
import type { FieldOptions as _google_protobuf_FieldOptions, FieldOptions__Output as _google_protobuf_FieldOptions__Output } from './google/protobuf/FieldOptions.ts';
import type { FileDescriptorProto as _google_protobuf_FileDescriptorProto, FileDescriptorProto__Output as _google_protobuf_FileDescriptorProto__Output } from './google/protobuf/FileDescriptorProto.ts';
import type { FileDescriptorSet as _google_protobuf_FileDescriptorSet, FileDescriptorSet__Output as _google_protobuf_FileDescriptorSet__Output } from './google/protobuf/FileDescriptorSet.ts';
import type { FileOptions as _google_protobuf_FileOptions, FileOptions__Output as _google_protobuf_FileOptions__Output } from './google/protobuf/FileOptions.ts';
import type { FloatValue as _google_protobuf_FloatValue, FloatValue__Output as _google_protobuf_FloatValue__Output } from './google/protobuf/FloatValue.ts';
import type { GeneratedCodeInfo as _google_protobuf_GeneratedCodeInfo, GeneratedCodeInfo__Output as _google_protobuf_GeneratedCodeInfo__Output } from './google/protobuf/GeneratedCodeInfo.ts';
import type { Int32Value as _google_protobuf_Int32Value, Int32Value__Output as _google_protobuf_Int32Value__Output } from './google/protobuf/Int32Value.ts';
import type { Int64Value as _google_protobuf_Int64Value, Int64Value__Output as _google_protobuf_Int64Value__Output } from './google/protobuf/Int64Value.ts';
import type { MessageOptions as _google_protobuf_MessageOptions, MessageOptions__Output as _google_protobuf_MessageOptions__Output } from './google/protobuf/MessageOptions.ts';
import type { MethodDescriptorProto as _google_protobuf_MethodDescriptorProto, MethodDescriptorProto__Output as _google_protobuf_MethodDescriptorProto__Output } from './google/protobuf/MethodDescriptorProto.ts';
import type { MethodOptions as _google_protobuf_MethodOptions, MethodOptions__Output as _google_protobuf_MethodOptions__Output } from './google/protobuf/MethodOptions.ts';
import type { OneofDescriptorProto as _google_protobuf_OneofDescriptorProto, OneofDescriptorProto__Output as _google_protobuf_OneofDescriptorProto__Output } from './google/protobuf/OneofDescriptorProto.ts';
import type { OneofOptions as _google_protobuf_OneofOptions, OneofOptions__Output as _google_protobuf_OneofOptions__Output } from './google/protobuf/OneofOptions.ts';
import type { ServiceDescriptorProto as _google_protobuf_ServiceDescriptorProto, ServiceDescriptorProto__Output as _google_protobuf_ServiceDescriptorProto__Output } from './google/protobuf/ServiceDescriptorProto.ts';
import type { ServiceOptions as _google_protobuf_ServiceOptions, ServiceOptions__Output as _google_protobuf_ServiceOptions__Output } from './google/protobuf/ServiceOptions.ts';
import type { SourceCodeInfo as _google_protobuf_SourceCodeInfo, SourceCodeInfo__Output as _google_protobuf_SourceCodeInfo__Output } from './google/protobuf/SourceCodeInfo.ts';
import type { StringValue as _google_protobuf_StringValue, StringValue__Output as _google_protobuf_StringValue__Output } from './google/protobuf/StringValue.ts';
import type { Timestamp as _google_protobuf_Timestamp, Timestamp__Output as _google_protobuf_Timestamp__Output } from './google/protobuf/Timestamp.ts';
import type { UInt32Value as _google_protobuf_UInt32Value, UInt32Value__Output as _google_protobuf_UInt32Value__Output } from './google/protobuf/UInt32Value.ts';
import type { UInt64Value as _google_protobuf_UInt64Value, UInt64Value__Output as _google_protobuf_UInt64Value__Output } from './google/protobuf/UInt64Value.ts';
import type { UninterpretedOption as _google_protobuf_UninterpretedOption, UninterpretedOption__Output as _google_protobuf_UninterpretedOption__Output } from './google/protobuf/UninterpretedOption.ts';

type SubtypeConstructor<Constructor extends new (...args: any) => any, Subtype> = {
  new(...args: ConstructorParameters<Constructor>): Subtype;
};

export interface ProtoGrpcType {
  csi: {
    v1: {
      CapacityRange: MessageTypeDefinition<_csi_v1_CapacityRange, _csi_v1_CapacityRange__Output>
      Controller: SubtypeConstructor<typeof grpc.Client, _csi_v1_ControllerClient> & { service: _csi_v1_ControllerDefinition }
      ControllerExpandVolumeRequest: MessageTypeDefinition<_csi_v1_ControllerExpandVolumeRequest, _csi_v1_ControllerExpandVolumeRequest__Output>
      ControllerExpandVolumeResponse: MessageTypeDefinition<_csi_v1_ControllerExpandVolumeResponse, _csi_v1_ControllerExpandVolumeResponse__Output>
      ControllerGetCapabilitiesRequest: MessageTypeDefinition<_csi_v1_ControllerGetCapabilitiesRequest, _csi_v1_ControllerGetCapabilitiesRequest__Output>
      ControllerGetCapabilitiesResponse: MessageTypeDefinition<_csi_v1_ControllerGetCapabilitiesResponse, _csi_v1_ControllerGetCapabilitiesResponse__Output>
      ControllerGetVolumeRequest: MessageTypeDefinition<_csi_v1_ControllerGetVolumeRequest, _csi_v1_ControllerGetVolumeRequest__Output>
      ControllerGetVolumeResponse: MessageTypeDefinition<_csi_v1_ControllerGetVolumeResponse, _csi_v1_ControllerGetVolumeResponse__Output>
      ControllerModifyVolumeRequest: MessageTypeDefinition<_csi_v1_ControllerModifyVolumeRequest, _csi_v1_ControllerModifyVolumeRequest__Output>
      ControllerModifyVolumeResponse: MessageTypeDefinition<_csi_v1_ControllerModifyVolumeResponse, _csi_v1_ControllerModifyVolumeResponse__Output>
      ControllerPublishVolumeRequest: MessageTypeDefinition<_csi_v1_ControllerPublishVolumeRequest, _csi_v1_ControllerPublishVolumeRequest__Output>
      ControllerPublishVolumeResponse: MessageTypeDefinition<_csi_v1_ControllerPublishVolumeResponse, _csi_v1_ControllerPublishVolumeResponse__Output>
      ControllerServiceCapability: MessageTypeDefinition<_csi_v1_ControllerServiceCapability, _csi_v1_ControllerServiceCapability__Output>
      ControllerUnpublishVolumeRequest: MessageTypeDefinition<_csi_v1_ControllerUnpublishVolumeRequest, _csi_v1_ControllerUnpublishVolumeRequest__Output>
      ControllerUnpublishVolumeResponse: MessageTypeDefinition<_csi_v1_ControllerUnpublishVolumeResponse, _csi_v1_ControllerUnpublishVolumeResponse__Output>
      CreateSnapshotRequest: MessageTypeDefinition<_csi_v1_CreateSnapshotRequest, _csi_v1_CreateSnapshotRequest__Output>
      CreateSnapshotResponse: MessageTypeDefinition<_csi_v1_CreateSnapshotResponse, _csi_v1_CreateSnapshotResponse__Output>
      CreateVolumeGroupSnapshotRequest: MessageTypeDefinition<_csi_v1_CreateVolumeGroupSnapshotRequest, _csi_v1_CreateVolumeGroupSnapshotRequest__Output>
      CreateVolumeGroupSnapshotResponse: MessageTypeDefinition<_csi_v1_CreateVolumeGroupSnapshotResponse, _csi_v1_CreateVolumeGroupSnapshotResponse__Output>
      CreateVolumeRequest: MessageTypeDefinition<_csi_v1_CreateVolumeRequest, _csi_v1_CreateVolumeRequest__Output>
      CreateVolumeResponse: MessageTypeDefinition<_csi_v1_CreateVolumeResponse, _csi_v1_CreateVolumeResponse__Output>
      DeleteSnapshotRequest: MessageTypeDefinition<_csi_v1_DeleteSnapshotRequest, _csi_v1_DeleteSnapshotRequest__Output>
      DeleteSnapshotResponse: MessageTypeDefinition<_csi_v1_DeleteSnapshotResponse, _csi_v1_DeleteSnapshotResponse__Output>
      DeleteVolumeGroupSnapshotRequest: MessageTypeDefinition<_csi_v1_DeleteVolumeGroupSnapshotRequest, _csi_v1_DeleteVolumeGroupSnapshotRequest__Output>
      DeleteVolumeGroupSnapshotResponse: MessageTypeDefinition<_csi_v1_DeleteVolumeGroupSnapshotResponse, _csi_v1_DeleteVolumeGroupSnapshotResponse__Output>
      DeleteVolumeRequest: MessageTypeDefinition<_csi_v1_DeleteVolumeRequest, _csi_v1_DeleteVolumeRequest__Output>
      DeleteVolumeResponse: MessageTypeDefinition<_csi_v1_DeleteVolumeResponse, _csi_v1_DeleteVolumeResponse__Output>
      GetCapacityRequest: MessageTypeDefinition<_csi_v1_GetCapacityRequest, _csi_v1_GetCapacityRequest__Output>
      GetCapacityResponse: MessageTypeDefinition<_csi_v1_GetCapacityResponse, _csi_v1_GetCapacityResponse__Output>
      GetPluginCapabilitiesRequest: MessageTypeDefinition<_csi_v1_GetPluginCapabilitiesRequest, _csi_v1_GetPluginCapabilitiesRequest__Output>
      GetPluginCapabilitiesResponse: MessageTypeDefinition<_csi_v1_GetPluginCapabilitiesResponse, _csi_v1_GetPluginCapabilitiesResponse__Output>
      GetPluginInfoRequest: MessageTypeDefinition<_csi_v1_GetPluginInfoRequest, _csi_v1_GetPluginInfoRequest__Output>
      GetPluginInfoResponse: MessageTypeDefinition<_csi_v1_GetPluginInfoResponse, _csi_v1_GetPluginInfoResponse__Output>
      GetVolumeGroupSnapshotRequest: MessageTypeDefinition<_csi_v1_GetVolumeGroupSnapshotRequest, _csi_v1_GetVolumeGroupSnapshotRequest__Output>
      GetVolumeGroupSnapshotResponse: MessageTypeDefinition<_csi_v1_GetVolumeGroupSnapshotResponse, _csi_v1_GetVolumeGroupSnapshotResponse__Output>
      GroupController: SubtypeConstructor<typeof grpc.Client, _csi_v1_GroupControllerClient> & { service: _csi_v1_GroupControllerDefinition }
      GroupControllerGetCapabilitiesRequest: MessageTypeDefinition<_csi_v1_GroupControllerGetCapabilitiesRequest, _csi_v1_GroupControllerGetCapabilitiesRequest__Output>
      GroupControllerGetCapabilitiesResponse: MessageTypeDefinition<_csi_v1_GroupControllerGetCapabilitiesResponse, _csi_v1_GroupControllerGetCapabilitiesResponse__Output>
      GroupControllerServiceCapability: MessageTypeDefinition<_csi_v1_GroupControllerServiceCapability, _csi_v1_GroupControllerServiceCapability__Output>
      Identity: SubtypeConstructor<typeof grpc.Client, _csi_v1_IdentityClient> & { service: _csi_v1_IdentityDefinition }
      ListSnapshotsRequest: MessageTypeDefinition<_csi_v1_ListSnapshotsRequest, _csi_v1_ListSnapshotsRequest__Output>
      ListSnapshotsResponse: MessageTypeDefinition<_csi_v1_ListSnapshotsResponse, _csi_v1_ListSnapshotsResponse__Output>
      ListVolumesRequest: MessageTypeDefinition<_csi_v1_ListVolumesRequest, _csi_v1_ListVolumesRequest__Output>
      ListVolumesResponse: MessageTypeDefinition<_csi_v1_ListVolumesResponse, _csi_v1_ListVolumesResponse__Output>
      Node: SubtypeConstructor<typeof grpc.Client, _csi_v1_NodeClient> & { service: _csi_v1_NodeDefinition }
      NodeExpandVolumeRequest: MessageTypeDefinition<_csi_v1_NodeExpandVolumeRequest, _csi_v1_NodeExpandVolumeRequest__Output>
      NodeExpandVolumeResponse: MessageTypeDefinition<_csi_v1_NodeExpandVolumeResponse, _csi_v1_NodeExpandVolumeResponse__Output>
      NodeGetCapabilitiesRequest: MessageTypeDefinition<_csi_v1_NodeGetCapabilitiesRequest, _csi_v1_NodeGetCapabilitiesRequest__Output>
      NodeGetCapabilitiesResponse: MessageTypeDefinition<_csi_v1_NodeGetCapabilitiesResponse, _csi_v1_NodeGetCapabilitiesResponse__Output>
      NodeGetInfoRequest: MessageTypeDefinition<_csi_v1_NodeGetInfoRequest, _csi_v1_NodeGetInfoRequest__Output>
      NodeGetInfoResponse: MessageTypeDefinition<_csi_v1_NodeGetInfoResponse, _csi_v1_NodeGetInfoResponse__Output>
      NodeGetVolumeStatsRequest: MessageTypeDefinition<_csi_v1_NodeGetVolumeStatsRequest, _csi_v1_NodeGetVolumeStatsRequest__Output>
      NodeGetVolumeStatsResponse: MessageTypeDefinition<_csi_v1_NodeGetVolumeStatsResponse, _csi_v1_NodeGetVolumeStatsResponse__Output>
      NodePublishVolumeRequest: MessageTypeDefinition<_csi_v1_NodePublishVolumeRequest, _csi_v1_NodePublishVolumeRequest__Output>
      NodePublishVolumeResponse: MessageTypeDefinition<_csi_v1_NodePublishVolumeResponse, _csi_v1_NodePublishVolumeResponse__Output>
      NodeServiceCapability: MessageTypeDefinition<_csi_v1_NodeServiceCapability, _csi_v1_NodeServiceCapability__Output>
      NodeStageVolumeRequest: MessageTypeDefinition<_csi_v1_NodeStageVolumeRequest, _csi_v1_NodeStageVolumeRequest__Output>
      NodeStageVolumeResponse: MessageTypeDefinition<_csi_v1_NodeStageVolumeResponse, _csi_v1_NodeStageVolumeResponse__Output>
      NodeUnpublishVolumeRequest: MessageTypeDefinition<_csi_v1_NodeUnpublishVolumeRequest, _csi_v1_NodeUnpublishVolumeRequest__Output>
      NodeUnpublishVolumeResponse: MessageTypeDefinition<_csi_v1_NodeUnpublishVolumeResponse, _csi_v1_NodeUnpublishVolumeResponse__Output>
      NodeUnstageVolumeRequest: MessageTypeDefinition<_csi_v1_NodeUnstageVolumeRequest, _csi_v1_NodeUnstageVolumeRequest__Output>
      NodeUnstageVolumeResponse: MessageTypeDefinition<_csi_v1_NodeUnstageVolumeResponse, _csi_v1_NodeUnstageVolumeResponse__Output>
      PluginCapability: MessageTypeDefinition<_csi_v1_PluginCapability, _csi_v1_PluginCapability__Output>
      ProbeRequest: MessageTypeDefinition<_csi_v1_ProbeRequest, _csi_v1_ProbeRequest__Output>
      ProbeResponse: MessageTypeDefinition<_csi_v1_ProbeResponse, _csi_v1_ProbeResponse__Output>
      Snapshot: MessageTypeDefinition<_csi_v1_Snapshot, _csi_v1_Snapshot__Output>
      Topology: MessageTypeDefinition<_csi_v1_Topology, _csi_v1_Topology__Output>
      TopologyRequirement: MessageTypeDefinition<_csi_v1_TopologyRequirement, _csi_v1_TopologyRequirement__Output>
      ValidateVolumeCapabilitiesRequest: MessageTypeDefinition<_csi_v1_ValidateVolumeCapabilitiesRequest, _csi_v1_ValidateVolumeCapabilitiesRequest__Output>
      ValidateVolumeCapabilitiesResponse: MessageTypeDefinition<_csi_v1_ValidateVolumeCapabilitiesResponse, _csi_v1_ValidateVolumeCapabilitiesResponse__Output>
      Volume: MessageTypeDefinition<_csi_v1_Volume, _csi_v1_Volume__Output>
      VolumeCapability: MessageTypeDefinition<_csi_v1_VolumeCapability, _csi_v1_VolumeCapability__Output>
      VolumeCondition: MessageTypeDefinition<_csi_v1_VolumeCondition, _csi_v1_VolumeCondition__Output>
      VolumeContentSource: MessageTypeDefinition<_csi_v1_VolumeContentSource, _csi_v1_VolumeContentSource__Output>
      VolumeGroupSnapshot: MessageTypeDefinition<_csi_v1_VolumeGroupSnapshot, _csi_v1_VolumeGroupSnapshot__Output>
      VolumeUsage: MessageTypeDefinition<_csi_v1_VolumeUsage, _csi_v1_VolumeUsage__Output>
    }
  }
  google: {
    protobuf: {
      BoolValue: MessageTypeDefinition<_google_protobuf_BoolValue, _google_protobuf_BoolValue__Output>
      BytesValue: MessageTypeDefinition<_google_protobuf_BytesValue, _google_protobuf_BytesValue__Output>
      DescriptorProto: MessageTypeDefinition<_google_protobuf_DescriptorProto, _google_protobuf_DescriptorProto__Output>
      DoubleValue: MessageTypeDefinition<_google_protobuf_DoubleValue, _google_protobuf_DoubleValue__Output>
      Edition: EnumTypeDefinition
      EnumDescriptorProto: MessageTypeDefinition<_google_protobuf_EnumDescriptorProto, _google_protobuf_EnumDescriptorProto__Output>
      EnumOptions: MessageTypeDefinition<_google_protobuf_EnumOptions, _google_protobuf_EnumOptions__Output>
      EnumValueDescriptorProto: MessageTypeDefinition<_google_protobuf_EnumValueDescriptorProto, _google_protobuf_EnumValueDescriptorProto__Output>
      EnumValueOptions: MessageTypeDefinition<_google_protobuf_EnumValueOptions, _google_protobuf_EnumValueOptions__Output>
      ExtensionRangeOptions: MessageTypeDefinition<_google_protobuf_ExtensionRangeOptions, _google_protobuf_ExtensionRangeOptions__Output>
      FeatureSet: MessageTypeDefinition<_google_protobuf_FeatureSet, _google_protobuf_FeatureSet__Output>
      FeatureSetDefaults: MessageTypeDefinition<_google_protobuf_FeatureSetDefaults, _google_protobuf_FeatureSetDefaults__Output>
      FieldDescriptorProto: MessageTypeDefinition<_google_protobuf_FieldDescriptorProto, _google_protobuf_FieldDescriptorProto__Output>
      FieldOptions: MessageTypeDefinition<_google_protobuf_FieldOptions, _google_protobuf_FieldOptions__Output>
      FileDescriptorProto: MessageTypeDefinition<_google_protobuf_FileDescriptorProto, _google_protobuf_FileDescriptorProto__Output>
      FileDescriptorSet: MessageTypeDefinition<_google_protobuf_FileDescriptorSet, _google_protobuf_FileDescriptorSet__Output>
      FileOptions: MessageTypeDefinition<_google_protobuf_FileOptions, _google_protobuf_FileOptions__Output>
      FloatValue: MessageTypeDefinition<_google_protobuf_FloatValue, _google_protobuf_FloatValue__Output>
      GeneratedCodeInfo: MessageTypeDefinition<_google_protobuf_GeneratedCodeInfo, _google_protobuf_GeneratedCodeInfo__Output>
      Int32Value: MessageTypeDefinition<_google_protobuf_Int32Value, _google_protobuf_Int32Value__Output>
      Int64Value: MessageTypeDefinition<_google_protobuf_Int64Value, _google_protobuf_Int64Value__Output>
      MessageOptions: MessageTypeDefinition<_google_protobuf_MessageOptions, _google_protobuf_MessageOptions__Output>
      MethodDescriptorProto: MessageTypeDefinition<_google_protobuf_MethodDescriptorProto, _google_protobuf_MethodDescriptorProto__Output>
      MethodOptions: MessageTypeDefinition<_google_protobuf_MethodOptions, _google_protobuf_MethodOptions__Output>
      OneofDescriptorProto: MessageTypeDefinition<_google_protobuf_OneofDescriptorProto, _google_protobuf_OneofDescriptorProto__Output>
      OneofOptions: MessageTypeDefinition<_google_protobuf_OneofOptions, _google_protobuf_OneofOptions__Output>
      ServiceDescriptorProto: MessageTypeDefinition<_google_protobuf_ServiceDescriptorProto, _google_protobuf_ServiceDescriptorProto__Output>
      ServiceOptions: MessageTypeDefinition<_google_protobuf_ServiceOptions, _google_protobuf_ServiceOptions__Output>
      SourceCodeInfo: MessageTypeDefinition<_google_protobuf_SourceCodeInfo, _google_protobuf_SourceCodeInfo__Output>
      StringValue: MessageTypeDefinition<_google_protobuf_StringValue, _google_protobuf_StringValue__Output>
      SymbolVisibility: EnumTypeDefinition
      Timestamp: MessageTypeDefinition<_google_protobuf_Timestamp, _google_protobuf_Timestamp__Output>
      UInt32Value: MessageTypeDefinition<_google_protobuf_UInt32Value, _google_protobuf_UInt32Value__Output>
      UInt64Value: MessageTypeDefinition<_google_protobuf_UInt64Value, _google_protobuf_UInt64Value__Output>
      UninterpretedOption: MessageTypeDefinition<_google_protobuf_UninterpretedOption, _google_protobuf_UninterpretedOption__Output>
    }
  }
}

