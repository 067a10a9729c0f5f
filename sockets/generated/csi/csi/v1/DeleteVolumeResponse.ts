// Original file: proto/csi/v1/csi.proto


export interface DeleteVolumeResponse {
}

export interface DeleteVolumeResponse__Output {
}
