// Original file: proto/podresources/v1/api.proto

import type { PodResources as _v1_PodResources, PodResources__Output as _v1_PodResources__Output } from '../v1/PodResources.ts';

/**
 * ListPodResourcesResponse is the response returned by List function
 */
export interface ListPodResourcesResponse {
  'pod_resources'?: (_v1_PodResources)[];
}

/**
 * ListPodResourcesResponse is the response returned by List function
 */
export interface ListPodResourcesResponse__Output {
  'pod_resources': (_v1_PodResources__Output)[];
}
