// Original file: proto/pluginregistration/v1/api.proto


/**
 * RegistrationStatus is the message sent from Kubelet pluginwatcher to the plugin for notification on registration status
 */
export interface RegistrationStatus {
  /**
   * True if plugin gets registered successfully at Kubelet
   */
  'plugin_registered'?: (boolean);
  /**
   * Error message in case plugin fails to register, empty string otherwise
   */
  'error'?: (string);
}

/**
 * RegistrationStatus is the message sent from Kubelet pluginwatcher to the plugin for notification on registration status
 */
export interface RegistrationStatus__Output {
  /**
   * True if plugin gets registered successfully at Kubelet
   */
  'plugin_registered': (boolean);
  /**
   * Error message in case plugin fails to register, empty string otherwise
   */
  'error': (string);
}
