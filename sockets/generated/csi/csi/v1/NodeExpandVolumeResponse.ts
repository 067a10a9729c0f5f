// Original file: proto/csi/v1/csi.proto

import type { Long } from '@grpc/proto-loader';

export interface NodeExpandVolumeResponse {
  /**
   * The capacity of the volume in bytes. This field is OPTIONAL.
   */
  'capacity_bytes'?: (number | string | Long);
}

export interface NodeExpandVolumeResponse__Output {
  /**
   * The capacity of the volume in bytes. This field is OPTIONAL.
   */
  'capacity_bytes': (string);
}
