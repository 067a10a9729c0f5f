// Original file: proto/deviceplugin/v1beta1/api.proto


/**
 * - PreStartContainer is expected to be called before each container start if indicated by plugin during registration phase.
 * - PreStartContainer allows kubelet to pass reinitialized devices to containers.
 * - PreStartContainer allows Device Plugin to run device specific operations on
 * the Devices requested
 */
export interface PreStartContainerRequest {
  'devices_ids'?: (string)[];
}

/**
 * - PreStartContainer is expected to be called before each container start if indicated by plugin during registration phase.
 * - PreStartContainer allows kubelet to pass reinitialized devices to containers.
 * - PreStartContainer allows Device Plugin to run device specific operations on
 * the Devices requested
 */
export interface PreStartContainerRequest__Output {
  'devices_ids': (string)[];
}
