// Original file: proto/csi/v1/csi.proto


export interface NodeStageVolumeResponse {
}

export interface NodeStageVolumeResponse__Output {
}
