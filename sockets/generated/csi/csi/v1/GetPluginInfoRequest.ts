// Original file: proto/csi/v1/csi.proto


export interface GetPluginInfoRequest {
}

export interface GetPluginInfoRequest__Output {
}
