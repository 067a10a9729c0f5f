// Original file: proto/csi/v1/csi.proto


export interface NodeGetInfoRequest {
}

export interface NodeGetInfoRequest__Output {
}
