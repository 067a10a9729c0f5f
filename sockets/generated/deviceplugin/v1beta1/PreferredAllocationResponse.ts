// Original file: proto/deviceplugin/v1beta1/api.proto

import type { ContainerPreferredAllocationResponse as _v1beta1_ContainerPreferredAllocationResponse, ContainerPreferredAllocationResponse__Output as _v1beta1_ContainerPreferredAllocationResponse__Output } from '../v1beta1/ContainerPreferredAllocationResponse.ts';

/**
 * PreferredAllocationResponse returns a preferred allocation,
 * resulting from a PreferredAllocationRequest.
 */
export interface PreferredAllocationResponse {
  'container_responses'?: (_v1beta1_ContainerPreferredAllocationResponse)[];
}

/**
 * PreferredAllocationResponse returns a preferred allocation,
 * resulting from a PreferredAllocationRequest.
 */
export interface PreferredAllocationResponse__Output {
  'container_responses': (_v1beta1_ContainerPreferredAllocationResponse__Output)[];
}
