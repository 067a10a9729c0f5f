// Original file: proto/podresources/v1/api.proto

import type { ContainerDevices as _v1_ContainerDevices, ContainerDevices__Output as _v1_ContainerDevices__Output } from '../v1/ContainerDevices.ts';
import type { ContainerMemory as _v1_ContainerMemory, ContainerMemory__Output as _v1_ContainerMemory__Output } from '../v1/ContainerMemory.ts';
import type { DynamicResource as _v1_DynamicResource, DynamicResource__Output as _v1_DynamicResource__Output } from '../v1/DynamicResource.ts';
import type { Long } from '@grpc/proto-loader';

/**
 * ContainerResources contains information about the resources assigned to a container
 */
export interface ContainerResources {
  'name'?: (string);
  'devices'?: (_v1_ContainerDevices)[];
  'cpu_ids'?: (number | string | Long)[];
  'memory'?: (_v1_ContainerMemory)[];
  'dynamic_resources'?: (_v1_DynamicResource)[];
}

/**
 * ContainerResources contains information about the resources assigned to a container
 */
export interface ContainerResources__Output {
  'name': (string);
  'devices': (_v1_ContainerDevices__Output)[];
  'cpu_ids': (string)[];
  'memory': (_v1_ContainerMemory__Output)[];
  'dynamic_resources': (_v1_DynamicResource__Output)[];
}
