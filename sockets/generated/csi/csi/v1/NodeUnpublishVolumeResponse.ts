// Original file: proto/csi/v1/csi.proto


export interface NodeUnpublishVolumeResponse {
}

export interface NodeUnpublishVolumeResponse__Output {
}
