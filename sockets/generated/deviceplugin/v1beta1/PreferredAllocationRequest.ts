// Original file: proto/deviceplugin/v1beta1/api.proto

import type { ContainerPreferredAllocationRequest as _v1beta1_ContainerPreferredAllocationRequest, ContainerPreferredAllocationRequest__Output as _v1beta1_ContainerPreferredAllocationRequest__Output } from '../v1beta1/ContainerPreferredAllocationRequest.ts';

/**
 * PreferredAllocationRequest is passed via a call to GetPreferredAllocation()
 * at pod admission time. The device plugin should take the list of
 * `available_deviceIDs` and calculate a preferred allocation of size
 * 'allocation_size' from them, making sure to include the set of devices
 * listed in 'must_include_deviceIDs'.
 */
export interface PreferredAllocationRequest {
  'container_requests'?: (_v1beta1_ContainerPreferredAllocationRequest)[];
}

/**
 * PreferredAllocationRequest is passed via a call to GetPreferredAllocation()
 * at pod admission time. The device plugin should take the list of
 * `available_deviceIDs` and calculate a preferred allocation of size
 * 'allocation_size' from them, making sure to include the set of devices
 * listed in 'must_include_deviceIDs'.
 */
export interface PreferredAllocationRequest__Output {
  'container_requests': (_v1beta1_ContainerPreferredAllocationRequest__Output)[];
}
