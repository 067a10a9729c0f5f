// Original file: proto/podresources/v1/api.proto


/**
 * ListPodResourcesRequest is the request made to the PodResourcesLister service
 */
export interface ListPodResourcesRequest {
}

/**
 * ListPodResourcesRequest is the request made to the PodResourcesLister service
 */
export interface ListPodResourcesRequest__Output {
}
