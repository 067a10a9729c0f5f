// Original file: proto/deviceplugin/v1beta1/api.proto


export interface DevicePluginOptions {
  /**
   * Indicates if PreStartContainer call is required before each container start
   */
  'pre_start_required'?: (boolean);
  /**
   * Indicates if GetPreferredAllocation is implemented and available for calling
   */
  'get_preferred_allocation_available'?: (boolean);
}

export interface DevicePluginOptions__Output {
  /**
   * Indicates if PreStartContainer call is required before each container start
   */
  'pre_start_required': (boolean);
  /**
   * Indicates if GetPreferredAllocation is implemented and available for calling
   */
  'get_preferred_allocation_available': (boolean);
}
