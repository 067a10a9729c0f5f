// Original file: proto/deviceplugin/v1beta1/api.proto


/**
 * DeviceSpec specifies a host device to mount into a container.
 */
export interface DeviceSpec {
  /**
   * Path of the device within the container.
   */
  'container_path'?: (string);
  /**
   * Path of the device on the host.
   */
  'host_path'?: (string);
  /**
   * Cgroups permissions of the device, candidates are one or more of
   * * r - allows container to read from the specified device.
   * * w - allows container to write to the specified device.
   * * m - allows container to create device files that do not yet exist.
   */
  'permissions'?: (string);
}

/**
 * DeviceSpec specifies a host device to mount into a container.
 */
export interface DeviceSpec__Output {
  /**
   * Path of the device within the container.
   */
  'container_path': (string);
  /**
   * Path of the device on the host.
   */
  'host_path': (string);
  /**
   * Cgroups permissions of the device, candidates are one or more of
   * * r - allows container to read from the specified device.
   * * w - allows container to write to the specified device.
   * * m - allows container to create device files that do not yet exist.
   */
  'permissions': (string);
}
