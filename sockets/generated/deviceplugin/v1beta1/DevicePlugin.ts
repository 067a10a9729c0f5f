// Original file: proto/deviceplugin/v1beta1/api.proto

import type * as grpc from '@grpc/grpc-js'
import type { MethodDefinition } from '@grpc/proto-loader'
import type { AllocateRequest as _v1beta1_AllocateRequest, AllocateRequest__Output as _v1beta1_AllocateRequest__Output } from '../v1beta1/AllocateRequest.ts';
import type { AllocateResponse as _v1beta1_AllocateResponse, AllocateResponse__Output as _v1beta1_AllocateResponse__Output } from '../v1beta1/AllocateResponse.ts';
import type { DevicePluginOptions as _v1beta1_DevicePluginOptions, DevicePluginOptions__Output as _v1beta1_DevicePluginOptions__Output } from '../v1beta1/DevicePluginOptions.ts';
import type { Empty as _v1beta1_Empty, Empty__Output as _v1beta1_Empty__Output } from '../v1beta1/Empty.ts';
import type { ListAndWatchResponse as _v1beta1_ListAndWatchResponse, ListAndWatchResponse__Output as _v1beta1_ListAndWatchResponse__Output } from '../v1beta1/ListAndWatchResponse.ts';
import type { PreStartContainerRequest as _v1beta1_PreStartContainerRequest, PreStartContainerRequest__Output as _v1beta1_PreStartContainerRequest__Output } from '../v1beta1/PreStartContainerRequest.ts';
import type { PreStartContainerResponse as _v1beta1_PreStartContainerResponse, PreStartContainerResponse__Output as _v1beta1_PreStartContainerResponse__Output } from '../v1beta1/PreStartContainerResponse.ts';
import type { PreferredAllocationRequest as _v1beta1_PreferredAllocationRequest, PreferredAllocationRequest__Output as _v1beta1_PreferredAllocationRequest__Output } from '../v1beta1/PreferredAllocationRequest.ts';
import type { PreferredAllocationResponse as _v1beta1_PreferredAllocationResponse, PreferredAllocationResponse__Output as _v1beta1_PreferredAllocationResponse__Output } from '../v1beta1/PreferredAllocationResponse.ts';

/**
 * DevicePlugin is the service advertised by Device Plugins
 */
export interface DevicePluginClient extends grpc.Client {
  /**
   * Allocate is called during container creation so that the Device
   * Plugin can run device specific operations and instruct Kubelet
   * of the steps to make the Device available in the container
   */
  Allocate(argument: _v1beta1_AllocateRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_v1beta1_AllocateResponse__Output>): grpc.ClientUnaryCall;
  Allocate(argument: _v1beta1_AllocateRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_v1beta1_AllocateResponse__Output>): grpc.ClientUnaryCall;
  Allocate(argument: _v1beta1_AllocateRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_v1beta1_AllocateResponse__Output>): grpc.ClientUnaryCall;
  Allocate(argument: _v1beta1_AllocateRequest, callback: grpc.requestCallback<_v1beta1_AllocateResponse__Output>): grpc.ClientUnaryCall;
  /**
   * Allocate is called during container creation so that the Device
   * Plugin can run device specific operations and instruct Kubelet
   * of the steps to make the Device available in the container
   */
  allocate(argument: _v1beta1_AllocateRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_v1beta1_AllocateResponse__Output>): grpc.ClientUnaryCall;
  allocate(argument: _v1beta1_AllocateRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_v1beta1_AllocateResponse__Output>): grpc.ClientUnaryCall;
  allocate(argument: _v1beta1_AllocateRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_v1beta1_AllocateResponse__Output>): grpc.ClientUnaryCall;
  allocate(argument: _v1beta1_AllocateRequest, callback: grpc.requestCallback<_v1beta1_AllocateResponse__Output>): grpc.ClientUnaryCall;
  
  /**
   * GetDevicePluginOptions returns options to be communicated with Device
   * Manager
   */
  GetDevicePluginOptions(argument: _v1beta1_Empty, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_v1beta1_DevicePluginOptions__Output>): grpc.ClientUnaryCall;
  GetDevicePluginOptions(argument: _v1beta1_Empty, metadata: grpc.Metadata, callback: grpc.requestCallback<_v1beta1_DevicePluginOptions__Output>): grpc.ClientUnaryCall;
  GetDevicePluginOptions(argument: _v1beta1_Empty, options: grpc.CallOptions, callback: grpc.requestCallback<_v1beta1_DevicePluginOptions__Output>): grpc.ClientUnaryCall;
  GetDevicePluginOptions(argument: _v1beta1_Empty, callback: grpc.requestCallback<_v1beta1_DevicePluginOptions__Output>): grpc.ClientUnaryCall;
  /**
   * GetDevicePluginOptions returns options to be communicated with Device
   * Manager
   */
  getDevicePluginOptions(argument: _v1beta1_Empty, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_v1beta1_DevicePluginOptions__Output>): grpc.ClientUnaryCall;
  getDevicePluginOptions(argument: _v1beta1_Empty, metadata: grpc.Metadata, callback: grpc.requestCallback<_v1beta1_DevicePluginOptions__Output>): grpc.ClientUnaryCall;
  getDevicePluginOptions(argument: _v1beta1_Empty, options: grpc.CallOptions, callback: grpc.requestCallback<_v1beta1_DevicePluginOptions__Output>): grpc.ClientUnaryCall;
  getDevicePluginOptions(argument: _v1beta1_Empty, callback: grpc.requestCallback<_v1beta1_DevicePluginOptions__Output>): grpc.ClientUnaryCall;
  
  /**
   * GetPreferredAllocation returns a preferred set of devices to allocate
   * from a list of available ones. The resulting preferred allocation is not
   * guaranteed to be the allocation ultimately performed by the
   * devicemanager. It is only designed to help the devicemanager make a more
   * informed allocation decision when possible.
   */
  GetPreferredAllocation(argument: _v1beta1_PreferredAllocationRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_v1beta1_PreferredAllocationResponse__Output>): grpc.ClientUnaryCall;
  GetPreferredAllocation(argument: _v1beta1_PreferredAllocationRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_v1beta1_PreferredAllocationResponse__Output>): grpc.ClientUnaryCall;
  GetPreferredAllocation(argument: _v1beta1_PreferredAllocationRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_v1beta1_PreferredAllocationResponse__Output>): grpc.ClientUnaryCall;
  GetPreferredAllocation(argument: _v1beta1_PreferredAllocationRequest, callback: grpc.requestCallback<_v1beta1_PreferredAllocationResponse__Output>): grpc.ClientUnaryCall;
  /**
   * GetPreferredAllocation returns a preferred set of devices to allocate
   * from a list of available ones. The resulting preferred allocation is not
   * guaranteed to be the allocation ultimately performed by the
   * devicemanager. It is only designed to help the devicemanager make a more
   * informed allocation decision when possible.
   */
  getPreferredAllocation(argument: _v1beta1_PreferredAllocationRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_v1beta1_PreferredAllocationResponse__Output>): grpc.ClientUnaryCall;
  getPreferredAllocation(argument: _v1beta1_PreferredAllocationRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_v1beta1_PreferredAllocationResponse__Output>): grpc.ClientUnaryCall;
  getPreferredAllocation(argument: _v1beta1_PreferredAllocationRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_v1beta1_PreferredAllocationResponse__Output>): grpc.ClientUnaryCall;
  getPreferredAllocation(argument: _v1beta1_PreferredAllocationRequest, callback: grpc.requestCallback<_v1beta1_PreferredAllocationResponse__Output>): grpc.ClientUnaryCall;
  
  /**
   * ListAndWatch returns a stream of List of Devices
   * Whenever a Device state change or a Device disappears, ListAndWatch
   * returns the new list
   */
  ListAndWatch(argument: _v1beta1_Empty, metadata: grpc.Metadata, options?: grpc.CallOptions): grpc.ClientReadableStream<_v1beta1_ListAndWatchResponse__Output>;
  ListAndWatch(argument: _v1beta1_Empty, options?: grpc.CallOptions): grpc.ClientReadableStream<_v1beta1_ListAndWatchResponse__Output>;
  /**
   * ListAndWatch returns a stream of List of Devices
   * Whenever a Device state change or a Device disappears, ListAndWatch
   * returns the new list
   */
  listAndWatch(argument: _v1beta1_Empty, metadata: grpc.Metadata, options?: grpc.CallOptions): grpc.ClientReadableStream<_v1beta1_ListAndWatchResponse__Output>;
  listAndWatch(argument: _v1beta1_Empty, options?: grpc.CallOptions): grpc.ClientReadableStream<_v1beta1_ListAndWatchResponse__Output>;
  
  /**
   * PreStartContainer is called, if indicated by Device Plugin during registeration phase,
   * before each container start. Device plugin can run device specific operations
   * such as resetting the device before making devices available to the container
   */
  PreStartContainer(argument: _v1beta1_PreStartContainerRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_v1beta1_PreStartContainerResponse__Output>): grpc.ClientUnaryCall;
  PreStartContainer(argument: _v1beta1_PreStartContainerRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_v1beta1_PreStartContainerResponse__Output>): grpc.ClientUnaryCall;
  PreStartContainer(argument: _v1beta1_PreStartContainerRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_v1beta1_PreStartContainerResponse__Output>): grpc.ClientUnaryCall;
  PreStartContainer(argument: _v1beta1_PreStartContainerRequest, callback: grpc.requestCallback<_v1beta1_PreStartContainerResponse__Output>): grpc.ClientUnaryCall;
  /**
   * PreStartContainer is called, if indicated by Device Plugin during registeration phase,
   * before each container start. Device plugin can run device specific operations
   * such as resetting the device before making devices available to the container
   */
  preStartContainer(argument: _v1beta1_PreStartContainerRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_v1beta1_PreStartContainerResponse__Output>): grpc.ClientUnaryCall;
  preStartContainer(argument: _v1beta1_PreStartContainerRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_v1beta1_PreStartContainerResponse__Output>): grpc.ClientUnaryCall;
  preStartContainer(argument: _v1beta1_PreStartContainerRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_v1beta1_PreStartContainerResponse__Output>): grpc.ClientUnaryCall;
  preStartContainer(argument: _v1beta1_PreStartContainerRequest, callback: grpc.requestCallback<_v1beta1_PreStartContainerResponse__Output>): grpc.ClientUnaryCall;
  
}

/**
 * DevicePlugin is the service advertised by Device Plugins
 */
export interface DevicePluginHandlers extends grpc.UntypedServiceImplementation {
  /**
   * Allocate is called during container creation so that the Device
   * Plugin can run device specific operations and instruct Kubelet
   * of the steps to make the Device available in the container
   */
  Allocate: grpc.handleUnaryCall<_v1beta1_AllocateRequest__Output, _v1beta1_AllocateResponse>;
  
  /**
   * GetDevicePluginOptions returns options to be communicated with Device
   * Manager
   */
  GetDevicePluginOptions: grpc.handleUnaryCall<_v1beta1_Empty__Output, _v1beta1_DevicePluginOptions>;
  
  /**
   * GetPreferredAllocation returns a preferred set of devices to allocate
   * from a list of available ones. The resulting preferred allocation is not
   * guaranteed to be the allocation ultimately performed by the
   * devicemanager. It is only designed to help the devicemanager make a more
   * informed allocation decision when possible.
   */
  GetPreferredAllocation: grpc.handleUnaryCall<_v1beta1_PreferredAllocationRequest__Output, _v1beta1_PreferredAllocationResponse>;
  
  /**
   * ListAndWatch returns a stream of List of Devices
   * Whenever a Device state change or a Device disappears, ListAndWatch
   * returns the new list
   */
  ListAndWatch: grpc.handleServerStreamingCall<_v1beta1_Empty__Output, _v1beta1_ListAndWatchResponse>;
  
  /**
   * PreStartContainer is called, if indicated by Device Plugin during registeration phase,
   * before each container start. Device plugin can run device specific operations
   * such as resetting the device before making devices available to the container
   */
  PreStartContainer: grpc.handleUnaryCall<_v1beta1_PreStartContainerRequest__Output, _v1beta1_PreStartContainerResponse>;
  
}

export interface DevicePluginDefinition extends grpc.ServiceDefinition {
  Allocate: MethodDefinition<_v1beta1_AllocateRequest, _v1beta1_AllocateResponse, _v1beta1_AllocateRequest__Output, _v1beta1_AllocateResponse__Output>
  GetDevicePluginOptions: MethodDefinition<_v1beta1_Empty, _v1beta1_DevicePluginOptions, _v1beta1_Empty__Output, _v1beta1_DevicePluginOptions__Output>
  GetPreferredAllocation: MethodDefinition<_v1beta1_PreferredAllocationRequest, _v1beta1_PreferredAllocationResponse, _v1beta1_PreferredAllocationRequest__Output, _v1beta1_PreferredAllocationResponse__Output>
  ListAndWatch: MethodDefinition<_v1beta1_Empty, _v1beta1_ListAndWatchResponse, _v1beta1_Empty__Output, _v1beta1_ListAndWatchResponse__Output>
  PreStartContainer: MethodDefinition<_v1beta1_PreStartContainerRequest, _v1beta1_PreStartContainerResponse, _v1beta1_PreStartContainerRequest__Output, _v1beta1_PreStartContainerResponse__Output>
}
