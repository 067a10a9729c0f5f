// Original file: proto/deviceplugin/v1beta1/api.proto

import type { ContainerAllocateRequest as _v1beta1_ContainerAllocateRequest, ContainerAllocateRequest__Output as _v1beta1_ContainerAllocateRequest__Output } from '../v1beta1/ContainerAllocateRequest.ts';

/**
 * - Allocate is expected to be called during pod creation since allocation
 * failures for any container would result in pod startup failure.
 * - Allocate allows kubelet to exposes additional artifacts in a pod's
 * environment as directed by the plugin.
 * - Allocate allows Device Plugin to run device specific operations on
 * the Devices requested
 */
export interface AllocateRequest {
  'container_requests'?: (_v1beta1_ContainerAllocateRequest)[];
}

/**
 * - Allocate is expected to be called during pod creation since allocation
 * failures for any container would result in pod startup failure.
 * - Allocate allows kubelet to exposes additional artifacts in a pod's
 * environment as directed by the plugin.
 * - Allocate allows Device Plugin to run device specific operations on
 * the Devices requested
 */
export interface AllocateRequest__Output {
  'container_requests': (_v1beta1_ContainerAllocateRequest__Output)[];
}
