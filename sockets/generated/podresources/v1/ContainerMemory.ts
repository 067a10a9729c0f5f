// Original file: proto/podresources/v1/api.proto

import type { TopologyInfo as _v1_TopologyInfo, TopologyInfo__Output as _v1_TopologyInfo__Output } from '../v1/TopologyInfo.ts';
import type { Long } from '@grpc/proto-loader';

/**
 * ContainerMemory contains information about memory and hugepages assigned to a container
 */
export interface ContainerMemory {
  'memory_type'?: (string);
  'size'?: (number | string | Long);
  'topology'?: (_v1_TopologyInfo | null);
}

/**
 * ContainerMemory contains information about memory and hugepages assigned to a container
 */
export interface ContainerMemory__Output {
  'memory_type': (string);
  'size': (string);
  'topology': (_v1_TopologyInfo__Output | null);
}
