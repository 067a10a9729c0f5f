// Original file: proto/podresources/v1/api.proto


/**
 * GetPodResourcesRequest contains information about the pod
 */
export interface GetPodResourcesRequest {
  'pod_name'?: (string);
  'pod_namespace'?: (string);
}

/**
 * GetPodResourcesRequest contains information about the pod
 */
export interface GetPodResourcesRequest__Output {
  'pod_name': (string);
  'pod_namespace': (string);
}
