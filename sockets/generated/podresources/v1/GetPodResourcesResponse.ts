// Original file: proto/podresources/v1/api.proto

import type { PodResources as _v1_PodResources, PodResources__Output as _v1_PodResources__Output } from '../v1/PodResources.ts';

/**
 * GetPodResourcesResponse contains information about the pod the devices
 */
export interface GetPodResourcesResponse {
  'pod_resources'?: (_v1_PodResources | null);
}

/**
 * GetPodResourcesResponse contains information about the pod the devices
 */
export interface GetPodResourcesResponse__Output {
  'pod_resources': (_v1_PodResources__Output | null);
}
