// Original file: proto/podresources/v1/api.proto


export interface AllocatableResourcesRequest {
}

export interface AllocatableResourcesRequest__Output {
}
