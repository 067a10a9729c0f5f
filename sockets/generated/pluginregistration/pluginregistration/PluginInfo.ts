// Original file: proto/pluginregistration/v1/api.proto


/**
 * PluginInfo is the message sent from a plugin to the Kubelet pluginwatcher for plugin registration
 */
export interface PluginInfo {
  /**
   * Type of the Plugin. CSIPlugin or DevicePlugin
   */
  'type'?: (string);
  /**
   * Plugin name that uniquely identifies the plugin for the given plugin type.
   * For DevicePlugin, this is the resource name that the plugin manages and
   * should follow the extended resource name convention.
   * For CSI, this is the CSI driver registrar name.
   */
  'name'?: (string);
  /**
   * Optional endpoint location. If found set by Kubelet component,
   * Kubelet component will use this endpoint for specific requests.
   * This allows the plugin to register using one endpoint and possibly use
   * a different socket for control operations. CSI uses this model to delegate
   * its registration external from the plugin.
   */
  'endpoint'?: (string);
  /**
   * Plugin service API versions the plugin supports.
   * For DevicePlugin, this maps to the deviceplugin API versions the
   * plugin supports at the given socket.
   * The Kubelet component communicating with the plugin should be able
   * to choose any preferred version from this list, or returns an error
   * if none of the listed versions is supported.
   */
  'supported_versions'?: (string)[];
}

/**
 * PluginInfo is the message sent from a plugin to the Kubelet pluginwatcher for plugin registration
 */
export interface PluginInfo__Output {
  /**
   * Type of the Plugin. CSIPlugin or DevicePlugin
   */
  'type': (string);
  /**
   * Plugin name that uniquely identifies the plugin for the given plugin type.
   * For DevicePlugin, this is the resource name that the plugin manages and
   * should follow the extended resource name convention.
   * For CSI, this is the CSI driver registrar name.
   */
  'name': (string);
  /**
   * Optional endpoint location. If found set by Kubelet component,
   * Kubelet component will use this endpoint for specific requests.
   * This allows the plugin to register using one endpoint and possibly use
   * a different socket for control operations. CSI uses this model to delegate
   * its registration external from the plugin.
   */
  'endpoint': (string);
  /**
   * Plugin service API versions the plugin supports.
   * For DevicePlugin, this maps to the deviceplugin API versions the
   * plugin supports at the given socket.
   * The Kubelet component communicating with the plugin should be able
   * to choose any preferred version from this list, or returns an error
   * if none of the listed versions is supported.
   */
  'supported_versions': (string)[];
}
