// Original file: proto/deviceplugin/v1beta1/api.proto

import type { Mount as _v1beta1_Mount, Mount__Output as _v1beta1_Mount__Output } from '../v1beta1/Mount.ts';
import type { DeviceSpec as _v1beta1_DeviceSpec, DeviceSpec__Output as _v1beta1_DeviceSpec__Output } from '../v1beta1/DeviceSpec.ts';
import type { CDIDevice as _v1beta1_CDIDevice, CDIDevice__Output as _v1beta1_CDIDevice__Output } from '../v1beta1/CDIDevice.ts';

export interface ContainerAllocateResponse {
  /**
   * List of environment variable to be set in the container to access one of more devices.
   */
  'envs'?: ({[key: string]: string});
  /**
   * Mounts for the container.
   */
  'mounts'?: (_v1beta1_Mount)[];
  /**
   * Devices for the container.
   */
  'devices'?: (_v1beta1_DeviceSpec)[];
  /**
   * Container annotations to pass to the container runtime
   */
  'annotations'?: ({[key: string]: string});
  /**
   * CDI devices for the container.
   */
  'cdi_devices'?: (_v1beta1_CDIDevice)[];
}

export interface ContainerAllocateResponse__Output {
  /**
   * List of environment variable to be set in the container to access one of more devices.
   */
  'envs': ({[key: string]: string});
  /**
   * Mounts for the container.
   */
  'mounts': (_v1beta1_Mount__Output)[];
  /**
   * Devices for the container.
   */
  'devices': (_v1beta1_DeviceSpec__Output)[];
  /**
   * Container annotations to pass to the container runtime
   */
  'annotations': ({[key: string]: string});
  /**
   * CDI devices for the container.
   */
  'cdi_devices': (_v1beta1_CDIDevice__Output)[];
}
