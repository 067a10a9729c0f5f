// Original file: proto/csi/v1/csi.proto


export interface GroupControllerGetCapabilitiesRequest {
}

export interface GroupControllerGetCapabilitiesRequest__Output {
}
