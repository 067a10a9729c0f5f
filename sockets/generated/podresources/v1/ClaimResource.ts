// Original file: proto/podresources/v1/api.proto

import type { CDIDevice as _v1_CDIDevice, CDIDevice__Output as _v1_CDIDevice__Output } from '../v1/CDIDevice.ts';

/**
 * ClaimResource contains resource information. The driver name/pool name/device name
 * triplet uniquely identifies the device. Should DRA get extended to other kinds
 * of resources, then device_name will be empty and other fields will get added.
 * Each device at the DRA API level may map to zero or more CDI devices.
 */
export interface ClaimResource {
  'cdi_devices'?: (_v1_CDIDevice)[];
  'driver_name'?: (string);
  'pool_name'?: (string);
  'device_name'?: (string);
  'share_id'?: (string);
  '_share_id'?: "share_id";
}

/**
 * ClaimResource contains resource information. The driver name/pool name/device name
 * triplet uniquely identifies the device. Should DRA get extended to other kinds
 * of resources, then device_name will be empty and other fields will get added.
 * Each device at the DRA API level may map to zero or more CDI devices.
 */
export interface ClaimResource__Output {
  'cdi_devices': (_v1_CDIDevice__Output)[];
  'driver_name': (string);
  'pool_name': (string);
  'device_name': (string);
  'share_id'?: (string);
  '_share_id'?: "share_id";
}
