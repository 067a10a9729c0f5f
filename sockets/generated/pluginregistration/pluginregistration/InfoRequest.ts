// Original file: proto/pluginregistration/v1/api.proto


/**
 * InfoRequest is the empty request message from Kubelet
 */
export interface InfoRequest {
}

/**
 * InfoRequest is the empty request message from Kubelet
 */
export interface InfoRequest__Output {
}
