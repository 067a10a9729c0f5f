// Original file: proto/csi/v1/csi.proto

import type * as grpc from '@grpc/grpc-js'
import type { MethodDefinition } from '@grpc/proto-loader'
import type { CreateVolumeGroupSnapshotRequest as _csi_v1_CreateVolumeGroupSnapshotRequest, CreateVolumeGroupSnapshotRequest__Output as _csi_v1_CreateVolumeGroupSnapshotRequest__Output } from '../../csi/v1/CreateVolumeGroupSnapshotRequest.ts';
import type { CreateVolumeGroupSnapshotResponse as _csi_v1_CreateVolumeGroupSnapshotResponse, CreateVolumeGroupSnapshotResponse__Output as _csi_v1_CreateVolumeGroupSnapshotResponse__Output } from '../../csi/v1/CreateVolumeGroupSnapshotResponse.ts';
import type { DeleteVolumeGroupSnapshotRequest as _csi_v1_DeleteVolumeGroupSnapshotRequest, DeleteVolumeGroupSnapshotRequest__Output as _csi_v1_DeleteVolumeGroupSnapshotRequest__Output } from '../../csi/v1/DeleteVolumeGroupSnapshotRequest.ts';
import type { DeleteVolumeGroupSnapshotResponse as _csi_v1_DeleteVolumeGroupSnapshotResponse, DeleteVolumeGroupSnapshotResponse__Output as _csi_v1_DeleteVolumeGroupSnapshotResponse__Output } from '../../csi/v1/DeleteVolumeGroupSnapshotResponse.ts';
import type { GetVolumeGroupSnapshotRequest as _csi_v1_GetVolumeGroupSnapshotRequest, GetVolumeGroupSnapshotRequest__Output as _csi_v1_GetVolumeGroupSnapshotRequest__Output } from '../../csi/v1/GetVolumeGroupSnapshotRequest.ts';
import type { GetVolumeGroupSnapshotResponse as _csi_v1_GetVolumeGroupSnapshotResponse, GetVolumeGroupSnapshotResponse__Output as _csi_v1_GetVolumeGroupSnapshotResponse__Output } from '../../csi/v1/GetVolumeGroupSnapshotResponse.ts';
import type { GroupControllerGetCapabilitiesRequest as _csi_v1_GroupControllerGetCapabilitiesRequest, GroupControllerGetCapabilitiesRequest__Output as _csi_v1_GroupControllerGetCapabilitiesRequest__Output } from '../../csi/v1/GroupControllerGetCapabilitiesRequest.ts';
import type { GroupControllerGetCapabilitiesResponse as _csi_v1_GroupControllerGetCapabilitiesResponse, GroupControllerGetCapabilitiesResponse__Output as _csi_v1_GroupControllerGetCapabilitiesResponse__Output } from '../../csi/v1/GroupControllerGetCapabilitiesResponse.ts';

export interface GroupControllerClient extends grpc.Client {
  CreateVolumeGroupSnapshot(argument: _csi_v1_CreateVolumeGroupSnapshotRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_csi_v1_CreateVolumeGroupSnapshotResponse__Output>): grpc.ClientUnaryCall;
  CreateVolumeGroupSnapshot(argument: _csi_v1_CreateVolumeGroupSnapshotRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_csi_v1_CreateVolumeGroupSnapshotResponse__Output>): grpc.ClientUnaryCall;
  CreateVolumeGroupSnapshot(argument: _csi_v1_CreateVolumeGroupSnapshotRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_csi_v1_CreateVolumeGroupSnapshotResponse__Output>): grpc.ClientUnaryCall;
  CreateVolumeGroupSnapshot(argument: _csi_v1_CreateVolumeGroupSnapshotRequest, callback: grpc.requestCallback<_csi_v1_CreateVolumeGroupSnapshotResponse__Output>): grpc.ClientUnaryCall;
  createVolumeGroupSnapshot(argument: _csi_v1_CreateVolumeGroupSnapshotRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_csi_v1_CreateVolumeGroupSnapshotResponse__Output>): grpc.ClientUnaryCall;
  createVolumeGroupSnapshot(argument: _csi_v1_CreateVolumeGroupSnapshotRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_csi_v1_CreateVolumeGroupSnapshotResponse__Output>): grpc.ClientUnaryCall;
  createVolumeGroupSnapshot(argument: _csi_v1_CreateVolumeGroupSnapshotRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_csi_v1_CreateVolumeGroupSnapshotResponse__Output>): grpc.ClientUnaryCall;
  createVolumeGroupSnapshot(argument: _csi_v1_CreateVolumeGroupSnapshotRequest, callback: grpc.requestCallback<_csi_v1_CreateVolumeGroupSnapshotResponse__Output>): grpc.ClientUnaryCall;
  
  DeleteVolumeGroupSnapshot(argument: _csi_v1_DeleteVolumeGroupSnapshotRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_csi_v1_DeleteVolumeGroupSnapshotResponse__Output>): grpc.ClientUnaryCall;
  DeleteVolumeGroupSnapshot(argument: _csi_v1_DeleteVolumeGroupSnapshotRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_csi_v1_DeleteVolumeGroupSnapshotResponse__Output>): grpc.ClientUnaryCall;
  DeleteVolumeGroupSnapshot(argument: _csi_v1_DeleteVolumeGroupSnapshotRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_csi_v1_DeleteVolumeGroupSnapshotResponse__Output>): grpc.ClientUnaryCall;
  DeleteVolumeGroupSnapshot(argument: _csi_v1_DeleteVolumeGroupSnapshotRequest, callback: grpc.requestCallback<_csi_v1_DeleteVolumeGroupSnapshotResponse__Output>): grpc.ClientUnaryCall;
  deleteVolumeGroupSnapshot(argument: _csi_v1_DeleteVolumeGroupSnapshotRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_csi_v1_DeleteVolumeGroupSnapshotResponse__Output>): grpc.ClientUnaryCall;
  deleteVolumeGroupSnapshot(argument: _csi_v1_DeleteVolumeGroupSnapshotRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_csi_v1_DeleteVolumeGroupSnapshotResponse__Output>): grpc.ClientUnaryCall;
  deleteVolumeGroupSnapshot(argument: _csi_v1_DeleteVolumeGroupSnapshotRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_csi_v1_DeleteVolumeGroupSnapshotResponse__Output>): grpc.ClientUnaryCall;
  deleteVolumeGroupSnapshot(argument: _csi_v1_DeleteVolumeGroupSnapshotRequest, callback: grpc.requestCallback<_csi_v1_DeleteVolumeGroupSnapshotResponse__Output>): grpc.ClientUnaryCall;
  
  GetVolumeGroupSnapshot(argument: _csi_v1_GetVolumeGroupSnapshotRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_csi_v1_GetVolumeGroupSnapshotResponse__Output>): grpc.ClientUnaryCall;
  GetVolumeGroupSnapshot(argument: _csi_v1_GetVolumeGroupSnapshotRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_csi_v1_GetVolumeGroupSnapshotResponse__Output>): grpc.ClientUnaryCall;
  GetVolumeGroupSnapshot(argument: _csi_v1_GetVolumeGroupSnapshotRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_csi_v1_GetVolumeGroupSnapshotResponse__Output>): grpc.ClientUnaryCall;
  GetVolumeGroupSnapshot(argument: _csi_v1_GetVolumeGroupSnapshotRequest, callback: grpc.requestCallback<_csi_v1_GetVolumeGroupSnapshotResponse__Output>): grpc.ClientUnaryCall;
  getVolumeGroupSnapshot(argument: _csi_v1_GetVolumeGroupSnapshotRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_csi_v1_GetVolumeGroupSnapshotResponse__Output>): grpc.ClientUnaryCall;
  getVolumeGroupSnapshot(argument: _csi_v1_GetVolumeGroupSnapshotRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_csi_v1_GetVolumeGroupSnapshotResponse__Output>): grpc.ClientUnaryCall;
  getVolumeGroupSnapshot(argument: _csi_v1_GetVolumeGroupSnapshotRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_csi_v1_GetVolumeGroupSnapshotResponse__Output>): grpc.ClientUnaryCall;
  getVolumeGroupSnapshot(argument: _csi_v1_GetVolumeGroupSnapshotRequest, callback: grpc.requestCallback<_csi_v1_GetVolumeGroupSnapshotResponse__Output>): grpc.ClientUnaryCall;
  
  GroupControllerGetCapabilities(argument: _csi_v1_GroupControllerGetCapabilitiesRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_csi_v1_GroupControllerGetCapabilitiesResponse__Output>): grpc.ClientUnaryCall;
  GroupControllerGetCapabilities(argument: _csi_v1_GroupControllerGetCapabilitiesRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_csi_v1_GroupControllerGetCapabilitiesResponse__Output>): grpc.ClientUnaryCall;
  GroupControllerGetCapabilities(argument: _csi_v1_GroupControllerGetCapabilitiesRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_csi_v1_GroupControllerGetCapabilitiesResponse__Output>): grpc.ClientUnaryCall;
  GroupControllerGetCapabilities(argument: _csi_v1_GroupControllerGetCapabilitiesRequest, callback: grpc.requestCallback<_csi_v1_GroupControllerGetCapabilitiesResponse__Output>): grpc.ClientUnaryCall;
  groupControllerGetCapabilities(argument: _csi_v1_GroupControllerGetCapabilitiesRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_csi_v1_GroupControllerGetCapabilitiesResponse__Output>): grpc.ClientUnaryCall;
  groupControllerGetCapabilities(argument: _csi_v1_GroupControllerGetCapabilitiesRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_csi_v1_GroupControllerGetCapabilitiesResponse__Output>): grpc.ClientUnaryCall;
  groupControllerGetCapabilities(argument: _csi_v1_GroupControllerGetCapabilitiesRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_csi_v1_GroupControllerGetCapabilitiesResponse__Output>): grpc.ClientUnaryCall;
  groupControllerGetCapabilities(argument: _csi_v1_GroupControllerGetCapabilitiesRequest, callback: grpc.requestCallback<_csi_v1_GroupControllerGetCapabilitiesResponse__Output>): grpc.ClientUnaryCall;
  
}

export interface GroupControllerHandlers extends grpc.UntypedServiceImplementation {
  CreateVolumeGroupSnapshot: grpc.handleUnaryCall<_csi_v1_CreateVolumeGroupSnapshotRequest__Output, _csi_v1_CreateVolumeGroupSnapshotResponse>;
  
  DeleteVolumeGroupSnapshot: grpc.handleUnaryCall<_csi_v1_DeleteVolumeGroupSnapshotRequest__Output, _csi_v1_DeleteVolumeGroupSnapshotResponse>;
  
  GetVolumeGroupSnapshot: grpc.handleUnaryCall<_csi_v1_GetVolumeGroupSnapshotRequest__Output, _csi_v1_GetVolumeGroupSnapshotResponse>;
  
  GroupControllerGetCapabilities: grpc.handleUnaryCall<_csi_v1_GroupControllerGetCapabilitiesRequest__Output, _csi_v1_GroupControllerGetCapabilitiesResponse>;
  
}

export interface GroupControllerDefinition extends grpc.ServiceDefinition {
  CreateVolumeGroupSnapshot: MethodDefinition<_csi_v1_CreateVolumeGroupSnapshotRequest, _csi_v1_CreateVolumeGroupSnapshotResponse, _csi_v1_CreateVolumeGroupSnapshotRequest__Output, _csi_v1_CreateVolumeGroupSnapshotResponse__Output>
  DeleteVolumeGroupSnapshot: MethodDefinition<_csi_v1_DeleteVolumeGroupSnapshotRequest, _csi_v1_DeleteVolumeGroupSnapshotResponse, _csi_v1_DeleteVolumeGroupSnapshotRequest__Output, _csi_v1_DeleteVolumeGroupSnapshotResponse__Output>
  GetVolumeGroupSnapshot: MethodDefinition<_csi_v1_GetVolumeGroupSnapshotRequest, _csi_v1_GetVolumeGroupSnapshotResponse, _csi_v1_GetVolumeGroupSnapshotRequest__Output, _csi_v1_GetVolumeGroupSnapshotResponse__Output>
  GroupControllerGetCapabilities: MethodDefinition<_csi_v1_GroupControllerGetCapabilitiesRequest, _csi_v1_GroupControllerGetCapabilitiesResponse, _csi_v1_GroupControllerGetCapabilitiesRequest__Output, _csi_v1_GroupControllerGetCapabilitiesResponse__Output>
}
