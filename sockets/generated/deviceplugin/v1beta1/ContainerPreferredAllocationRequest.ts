// Original file: proto/deviceplugin/v1beta1/api.proto


export interface ContainerPreferredAllocationRequest {
  /**
   * List of available deviceIDs from which to choose a preferred allocation
   */
  'available_deviceIDs'?: (string)[];
  /**
   * List of deviceIDs that must be included in the preferred allocation
   */
  'must_include_deviceIDs'?: (string)[];
  /**
   * Number of devices to include in the preferred allocation
   */
  'allocation_size'?: (number);
}

export interface ContainerPreferredAllocationRequest__Output {
  /**
   * List of available deviceIDs from which to choose a preferred allocation
   */
  'available_deviceIDs': (string)[];
  /**
   * List of deviceIDs that must be included in the preferred allocation
   */
  'must_include_deviceIDs': (string)[];
  /**
   * Number of devices to include in the preferred allocation
   */
  'allocation_size': (number);
}
