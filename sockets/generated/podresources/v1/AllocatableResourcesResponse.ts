// Original file: proto/podresources/v1/api.proto

import type { ContainerDevices as _v1_ContainerDevices, ContainerDevices__Output as _v1_ContainerDevices__Output } from '../v1/ContainerDevices.ts';
import type { ContainerMemory as _v1_ContainerMemory, ContainerMemory__Output as _v1_ContainerMemory__Output } from '../v1/ContainerMemory.ts';
import type { Long } from '@grpc/proto-loader';

/**
 * AllocatableResourcesResponses contains informations about all the devices known by the kubelet
 */
export interface AllocatableResourcesResponse {
  'devices'?: (_v1_ContainerDevices)[];
  'cpu_ids'?: (number | string | Long)[];
  'memory'?: (_v1_ContainerMemory)[];
}

/**
 * AllocatableResourcesResponses contains informations about all the devices known by the kubelet
 */
export interface AllocatableResourcesResponse__Output {
  'devices': (_v1_ContainerDevices__Output)[];
  'cpu_ids': (string)[];
  'memory': (_v1_ContainerMemory__Output)[];
}
