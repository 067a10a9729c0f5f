// Original file: proto/csi/v1/csi.proto


export interface DeleteVolumeGroupSnapshotResponse {
}

export interface DeleteVolumeGroupSnapshotResponse__Output {
}
