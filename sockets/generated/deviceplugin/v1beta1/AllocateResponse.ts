// Original file: proto/deviceplugin/v1beta1/api.proto

import type { ContainerAllocateResponse as _v1beta1_ContainerAllocateResponse, ContainerAllocateResponse__Output as _v1beta1_ContainerAllocateResponse__Output } from '../v1beta1/ContainerAllocateResponse.ts';

/**
 * AllocateResponse includes the artifacts that needs to be injected into
 * a container for accessing 'deviceIDs' that were mentioned as part of
 * 'AllocateRequest'.
 * Failure Handling:
 * if Kubelet sends an allocation request for dev1 and dev2.
 * Allocation on dev1 succeeds but allocation on dev2 fails.
 * The Device plugin should send a ListAndWatch update and fail the
 * Allocation request
 */
export interface AllocateResponse {
  'container_responses'?: (_v1beta1_ContainerAllocateResponse)[];
}

/**
 * AllocateResponse includes the artifacts that needs to be injected into
 * a container for accessing 'deviceIDs' that were mentioned as part of
 * 'AllocateRequest'.
 * Failure Handling:
 * if Kubelet sends an allocation request for dev1 and dev2.
 * Allocation on dev1 succeeds but allocation on dev2 fails.
 * The Device plugin should send a ListAndWatch update and fail the
 * Allocation request
 */
export interface AllocateResponse__Output {
  'container_responses': (_v1beta1_ContainerAllocateResponse__Output)[];
}
