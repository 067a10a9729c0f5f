// Original file: proto/podresources/v1/api.proto

import type { Long } from '@grpc/proto-loader';

/**
 * NUMA representation of NUMA node
 */
export interface NUMANode {
  'ID'?: (number | string | Long);
}

/**
 * NUMA representation of NUMA node
 */
export interface NUMANode__Output {
  'ID': (string);
}
