// Original file: proto/csi/v1/csi.proto

import type * as grpc from '@grpc/grpc-js'
import type { MethodDefinition } from '@grpc/proto-loader'
import type { GetPluginCapabilitiesRequest as _csi_v1_GetPluginCapabilitiesRequest, GetPluginCapabilitiesRequest__Output as _csi_v1_GetPluginCapabilitiesRequest__Output } from '../../csi/v1/GetPluginCapabilitiesRequest.ts';
import type { GetPluginCapabilitiesResponse as _csi_v1_GetPluginCapabilitiesResponse, GetPluginCapabilitiesResponse__Output as _csi_v1_GetPluginCapabilitiesResponse__Output } from '../../csi/v1/GetPluginCapabilitiesResponse.ts';
import type { GetPluginInfoRequest as _csi_v1_GetPluginInfoRequest, GetPluginInfoRequest__Output as _csi_v1_GetPluginInfoRequest__Output } from '../../csi/v1/GetPluginInfoRequest.ts';
import type { GetPluginInfoResponse as _csi_v1_GetPluginInfoResponse, GetPluginInfoResponse__Output as _csi_v1_GetPluginInfoResponse__Output } from '../../csi/v1/GetPluginInfoResponse.ts';
import type { ProbeRequest as _csi_v1_ProbeRequest, ProbeRequest__Output as _csi_v1_ProbeRequest__Output } from '../../csi/v1/ProbeRequest.ts';
import type { ProbeResponse as _csi_v1_ProbeResponse, ProbeResponse__Output as _csi_v1_ProbeResponse__Output } from '../../csi/v1/ProbeResponse.ts';

export interface IdentityClient extends grpc.Client {
  GetPluginCapabilities(argument: _csi_v1_GetPluginCapabilitiesRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_csi_v1_GetPluginCapabilitiesResponse__Output>): grpc.ClientUnaryCall;
  GetPluginCapabilities(argument: _csi_v1_GetPluginCapabilitiesRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_csi_v1_GetPluginCapabilitiesResponse__Output>): grpc.ClientUnaryCall;
  GetPluginCapabilities(argument: _csi_v1_GetPluginCapabilitiesRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_csi_v1_GetPluginCapabilitiesResponse__Output>): grpc.ClientUnaryCall;
  GetPluginCapabilities(argument: _csi_v1_GetPluginCapabilitiesRequest, callback: grpc.requestCallback<_csi_v1_GetPluginCapabilitiesResponse__Output>): grpc.ClientUnaryCall;
  getPluginCapabilities(argument: _csi_v1_GetPluginCapabilitiesRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_csi_v1_GetPluginCapabilitiesResponse__Output>): grpc.ClientUnaryCall;
  getPluginCapabilities(argument: _csi_v1_GetPluginCapabilitiesRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_csi_v1_GetPluginCapabilitiesResponse__Output>): grpc.ClientUnaryCall;
  getPluginCapabilities(argument: _csi_v1_GetPluginCapabilitiesRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_csi_v1_GetPluginCapabilitiesResponse__Output>): grpc.ClientUnaryCall;
  getPluginCapabilities(argument: _csi_v1_GetPluginCapabilitiesRequest, callback: grpc.requestCallback<_csi_v1_GetPluginCapabilitiesResponse__Output>): grpc.ClientUnaryCall;
  
  GetPluginInfo(argument: _csi_v1_GetPluginInfoRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_csi_v1_GetPluginInfoResponse__Output>): grpc.ClientUnaryCall;
  GetPluginInfo(argument: _csi_v1_GetPluginInfoRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_csi_v1_GetPluginInfoResponse__Output>): grpc.ClientUnaryCall;
  GetPluginInfo(argument: _csi_v1_GetPluginInfoRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_csi_v1_GetPluginInfoResponse__Output>): grpc.ClientUnaryCall;
  GetPluginInfo(argument: _csi_v1_GetPluginInfoRequest, callback: grpc.requestCallback<_csi_v1_GetPluginInfoResponse__Output>): grpc.ClientUnaryCall;
  getPluginInfo(argument: _csi_v1_GetPluginInfoRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_csi_v1_GetPluginInfoResponse__Output>): grpc.ClientUnaryCall;
  getPluginInfo(argument: _csi_v1_GetPluginInfoRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_csi_v1_GetPluginInfoResponse__Output>): grpc.ClientUnaryCall;
  getPluginInfo(argument: _csi_v1_GetPluginInfoRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_csi_v1_GetPluginInfoResponse__Output>): grpc.ClientUnaryCall;
  getPluginInfo(argument: _csi_v1_GetPluginInfoRequest, callback: grpc.requestCallback<_csi_v1_GetPluginInfoResponse__Output>): grpc.ClientUnaryCall;
  
  Probe(argument: _csi_v1_ProbeRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_csi_v1_ProbeResponse__Output>): grpc.ClientUnaryCall;
  Probe(argument: _csi_v1_ProbeRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_csi_v1_ProbeResponse__Output>): grpc.ClientUnaryCall;
  Probe(argument: _csi_v1_ProbeRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_csi_v1_ProbeResponse__Output>): grpc.ClientUnaryCall;
  Probe(argument: _csi_v1_ProbeRequest, callback: grpc.requestCallback<_csi_v1_ProbeResponse__Output>): grpc.ClientUnaryCall;
  probe(argument: _csi_v1_ProbeRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_csi_v1_ProbeResponse__Output>): grpc.ClientUnaryCall;
  probe(argument: _csi_v1_ProbeRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_csi_v1_ProbeResponse__Output>): grpc.ClientUnaryCall;
  probe(argument: _csi_v1_ProbeRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_csi_v1_ProbeResponse__Output>): grpc.ClientUnaryCall;
  probe(argument: _csi_v1_ProbeRequest, callback: grpc.requestCallback<_csi_v1_ProbeResponse__Output>): grpc.ClientUnaryCall;
  
}

export interface IdentityHandlers extends grpc.UntypedServiceImplementation {
  GetPluginCapabilities: grpc.handleUnaryCall<_csi_v1_GetPluginCapabilitiesRequest__Output, _csi_v1_GetPluginCapabilitiesResponse>;
  
  GetPluginInfo: grpc.handleUnaryCall<_csi_v1_GetPluginInfoRequest__Output, _csi_v1_GetPluginInfoResponse>;
  
  Probe: grpc.handleUnaryCall<_csi_v1_ProbeRequest__Output, _csi_v1_ProbeResponse>;
  
}

export interface IdentityDefinition extends grpc.ServiceDefinition {
  GetPluginCapabilities: MethodDefinition<_csi_v1_GetPluginCapabilitiesRequest, _csi_v1_GetPluginCapabilitiesResponse, _csi_v1_GetPluginCapabilitiesRequest__Output, _csi_v1_GetPluginCapabilitiesResponse__Output>
  GetPluginInfo: MethodDefinition<_csi_v1_GetPluginInfoRequest, _csi_v1_GetPluginInfoResponse, _csi_v1_GetPluginInfoRequest__Output, _csi_v1_GetPluginInfoResponse__Output>
  Probe: MethodDefinition<_csi_v1_ProbeRequest, _csi_v1_ProbeResponse, _csi_v1_ProbeRequest__Output, _csi_v1_ProbeResponse__Output>
}
