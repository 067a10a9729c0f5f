// Original file: proto/csi/v1/csi.proto


export interface ControllerModifyVolumeResponse {
}

export interface ControllerModifyVolumeResponse__Output {
}
