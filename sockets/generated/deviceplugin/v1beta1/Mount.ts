// Original file: proto/deviceplugin/v1beta1/api.proto


/**
 * Mount specifies a host volume to mount into a container.
 * where device library or tools are installed on host and container
 */
export interface Mount {
  /**
   * Path of the mount within the container.
   */
  'container_path'?: (string);
  /**
   * Path of the mount on the host.
   */
  'host_path'?: (string);
  /**
   * If set, the mount is read-only.
   */
  'read_only'?: (boolean);
}

/**
 * Mount specifies a host volume to mount into a container.
 * where device library or tools are installed on host and container
 */
export interface Mount__Output {
  /**
   * Path of the mount within the container.
   */
  'container_path': (string);
  /**
   * Path of the mount on the host.
   */
  'host_path': (string);
  /**
   * If set, the mount is read-only.
   */
  'read_only': (boolean);
}
