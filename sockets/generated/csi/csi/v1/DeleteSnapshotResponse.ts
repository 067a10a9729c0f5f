// Original file: proto/csi/v1/csi.proto


export interface DeleteSnapshotResponse {
}

export interface DeleteSnapshotResponse__Output {
}
