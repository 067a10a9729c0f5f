// Original file: proto/deviceplugin/v1beta1/api.proto

import type { Device as _v1beta1_Device, Device__Output as _v1beta1_Device__Output } from '../v1beta1/Device.ts';

/**
 * ListAndWatch returns a stream of List of Devices
 * Whenever a Device state change or a Device disappears, ListAndWatch
 * returns the new list
 */
export interface ListAndWatchResponse {
  'devices'?: (_v1beta1_Device)[];
}

/**
 * ListAndWatch returns a stream of List of Devices
 * Whenever a Device state change or a Device disappears, ListAndWatch
 * returns the new list
 */
export interface ListAndWatchResponse__Output {
  'devices': (_v1beta1_Device__Output)[];
}
