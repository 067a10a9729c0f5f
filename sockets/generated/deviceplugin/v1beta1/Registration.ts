// Original file: proto/deviceplugin/v1beta1/api.proto

import type * as grpc from '@grpc/grpc-js'
import type { MethodDefinition } from '@grpc/proto-loader'
import type { Empty as _v1beta1_Empty, Empty__Output as _v1beta1_Empty__Output } from '../v1beta1/Empty.ts';
import type { RegisterRequest as _v1beta1_RegisterRequest, RegisterRequest__Output as _v1beta1_RegisterRequest__Output } from '../v1beta1/RegisterRequest.ts';

/**
 * Registration is the service advertised by the Kubelet
 * Only when Kubelet answers with a success code to a Register Request
 * may Device Plugins start their service
 * Registration may fail when device plugin version is not supported by
 * Kubelet or the registered resourceName is already taken by another
 * active device plugin. Device plugin is expected to terminate upon registration failure
 */
export interface RegistrationClient extends grpc.Client {
  Register(argument: _v1beta1_RegisterRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_v1beta1_Empty__Output>): grpc.ClientUnaryCall;
  Register(argument: _v1beta1_RegisterRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_v1beta1_Empty__Output>): grpc.ClientUnaryCall;
  Register(argument: _v1beta1_RegisterRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_v1beta1_Empty__Output>): grpc.ClientUnaryCall;
  Register(argument: _v1beta1_RegisterRequest, callback: grpc.requestCallback<_v1beta1_Empty__Output>): grpc.ClientUnaryCall;
  register(argument: _v1beta1_RegisterRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_v1beta1_Empty__Output>): grpc.ClientUnaryCall;
  register(argument: _v1beta1_RegisterRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_v1beta1_Empty__Output>): grpc.ClientUnaryCall;
  register(argument: _v1beta1_RegisterRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_v1beta1_Empty__Output>): grpc.ClientUnaryCall;
  register(argument: _v1beta1_RegisterRequest, callback: grpc.requestCallback<_v1beta1_Empty__Output>): grpc.ClientUnaryCall;
  
}

/**
 * Registration is the service advertised by the Kubelet
 * Only when Kubelet answers with a success code to a Register Request
 * may Device Plugins start their service
 * Registration may fail when device plugin version is not supported by
 * Kubelet or the registered resourceName is already taken by another
 * active device plugin. Device plugin is expected to terminate upon registration failure
 */
export interface RegistrationHandlers extends grpc.UntypedServiceImplementation {
  Register: grpc.handleUnaryCall<_v1beta1_RegisterRequest__Output, _v1beta1_Empty>;
  
}

export interface RegistrationDefinition extends grpc.ServiceDefinition {
  Register: MethodDefinition<_v1beta1_RegisterRequest, _v1beta1_Empty, _v1beta1_RegisterRequest__Output, _v1beta1_Empty__Output>
}
