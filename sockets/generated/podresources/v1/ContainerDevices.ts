// Original file: proto/podresources/v1/api.proto

import type { TopologyInfo as _v1_TopologyInfo, TopologyInfo__Output as _v1_TopologyInfo__Output } from '../v1/TopologyInfo.ts';

/**
 * ContainerDevices contains information about the devices assigned to a container
 */
export interface ContainerDevices {
  'resource_name'?: (string);
  'device_ids'?: (string)[];
  'topology'?: (_v1_TopologyInfo | null);
}

/**
 * ContainerDevices contains information about the devices assigned to a container
 */
export interface ContainerDevices__Output {
  'resource_name': (string);
  'device_ids': (string)[];
  'topology': (_v1_TopologyInfo__Output | null);
}
