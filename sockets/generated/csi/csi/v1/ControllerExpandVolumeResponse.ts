// Original file: proto/csi/v1/csi.proto

import type { Long } from '@grpc/proto-loader';

export interface ControllerExpandVolumeResponse {
  /**
   * Capacity of volume after expansion. This field is REQUIRED.
   */
  'capacity_bytes'?: (number | string | Long);
  /**
   * Whether node expansion is required for the volume. When true
   * the CO MUST make NodeExpandVolume RPC call on the node. This field
   * is REQUIRED.
   */
  'node_expansion_required'?: (boolean);
}

export interface ControllerExpandVolumeResponse__Output {
  /**
   * Capacity of volume after expansion. This field is REQUIRED.
   */
  'capacity_bytes': (string);
  /**
   * Whether node expansion is required for the volume. When true
   * the CO MUST make NodeExpandVolume RPC call on the node. This field
   * is REQUIRED.
   */
  'node_expansion_required': (boolean);
}
