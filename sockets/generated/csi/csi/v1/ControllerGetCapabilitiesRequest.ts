// Original file: proto/csi/v1/csi.proto


export interface ControllerGetCapabilitiesRequest {
}

export interface ControllerGetCapabilitiesRequest__Output {
}
