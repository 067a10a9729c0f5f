// Original file: proto/deviceplugin/v1beta1/api.proto

import type { DevicePluginOptions as _v1beta1_DevicePluginOptions, DevicePluginOptions__Output as _v1beta1_DevicePluginOptions__Output } from '../v1beta1/DevicePluginOptions.ts';

export interface RegisterRequest {
  /**
   * Version of the API the Device Plugin was built against
   */
  'version'?: (string);
  /**
   * Name of the unix socket the device plugin is listening on
   * PATH = path.Join(DevicePluginPath, endpoint)
   */
  'endpoint'?: (string);
  /**
   * Schedulable resource name. As of now it's expected to be a DNS Label
   */
  'resource_name'?: (string);
  /**
   * Options to be communicated with Device Manager
   */
  'options'?: (_v1beta1_DevicePluginOptions | null);
}

export interface RegisterRequest__Output {
  /**
   * Version of the API the Device Plugin was built against
   */
  'version': (string);
  /**
   * Name of the unix socket the device plugin is listening on
   * PATH = path.Join(DevicePluginPath, endpoint)
   */
  'endpoint': (string);
  /**
   * Schedulable resource name. As of now it's expected to be a DNS Label
   */
  'resource_name': (string);
  /**
   * Options to be communicated with Device Manager
   */
  'options': (_v1beta1_DevicePluginOptions__Output | null);
}
