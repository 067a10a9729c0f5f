// Original file: proto/csi/v1/csi.proto


export interface GetPluginCapabilitiesRequest {
}

export interface GetPluginCapabilitiesRequest__Output {
}
