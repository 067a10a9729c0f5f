// Original file: proto/pluginregistration/v1/api.proto


/**
 * RegistrationStatusResponse is sent by plugin to kubelet in response to RegistrationStatus RPC
 */
export interface RegistrationStatusResponse {
}

/**
 * RegistrationStatusResponse is sent by plugin to kubelet in response to RegistrationStatus RPC
 */
export interface RegistrationStatusResponse__Output {
}
