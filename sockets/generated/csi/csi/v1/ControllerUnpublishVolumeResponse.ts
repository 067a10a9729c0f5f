// Original file: proto/csi/v1/csi.proto


export interface ControllerUnpublishVolumeResponse {
}

export interface ControllerUnpublishVolumeResponse__Output {
}
