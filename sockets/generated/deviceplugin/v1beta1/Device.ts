// Original file: proto/deviceplugin/v1beta1/api.proto

import type { TopologyInfo as _v1beta1_TopologyInfo, TopologyInfo__Output as _v1beta1_TopologyInfo__Output } from '../v1beta1/TopologyInfo.ts';

/**
 * E.g:
 * struct Device {
 * ID: "GPU-fef8089b-4820-abfc-e83e-94318197576e",
 * Health: "Healthy",
 * Topology:
 * Node:
 * ID: 1
 * }
 */
export interface Device {
  /**
   * A unique ID assigned by the device plugin used
   * to identify devices during the communication
   * Max length of this field is 63 characters
   */
  'ID'?: (string);
  /**
   * Health of the device, can be healthy or unhealthy, see constants.go
   */
  'health'?: (string);
  /**
   * Topology for device
   */
  'topology'?: (_v1beta1_TopologyInfo | null);
}

/**
 * E.g:
 * struct Device {
 * ID: "GPU-fef8089b-4820-abfc-e83e-94318197576e",
 * Health: "Healthy",
 * Topology:
 * Node:
 * ID: 1
 * }
 */
export interface Device__Output {
  /**
   * A unique ID assigned by the device plugin used
   * to identify devices during the communication
   * Max length of this field is 63 characters
   */
  'ID': (string);
  /**
   * Health of the device, can be healthy or unhealthy, see constants.go
   */
  'health': (string);
  /**
   * Topology for device
   */
  'topology': (_v1beta1_TopologyInfo__Output | null);
}
