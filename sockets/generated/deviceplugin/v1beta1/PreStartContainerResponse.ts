// Original file: proto/deviceplugin/v1beta1/api.proto


/**
 * PreStartContainerResponse will be send by plugin in response to PreStartContainerRequest
 */
export interface PreStartContainerResponse {
}

/**
 * PreStartContainerResponse will be send by plugin in response to PreStartContainerRequest
 */
export interface PreStartContainerResponse__Output {
}
