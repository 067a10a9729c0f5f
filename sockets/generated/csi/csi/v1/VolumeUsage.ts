// Original file: proto/csi/v1/csi.proto

import type { Long } from '@grpc/proto-loader';

// Original file: proto/csi/v1/csi.proto

export const _csi_v1_VolumeUsage_Unit = {
  UNKNOWN: 'UNKNOWN',
  BYTES: 'BYTES',
  INODES: 'INODES',
} as const;

export type _csi_v1_VolumeUsage_Unit =
  | 'UNKNOWN'
  | 0
  | 'BYTES'
  | 1
  | 'INODES'
  | 2

export type _csi_v1_VolumeUsage_Unit__Output = typeof _csi_v1_VolumeUsage_Unit[keyof typeof _csi_v1_VolumeUsage_Unit]

export interface VolumeUsage {
  /**
   * The available capacity in specified Unit. This field is OPTIONAL.
   * The value of this field MUST NOT be negative.
   */
  'available'?: (number | string | Long);
  /**
   * The total capacity in specified Unit. This field is REQUIRED.
   * The value of this field MUST NOT be negative.
   */
  'total'?: (number | string | Long);
  /**
   * The used capacity in specified Unit. This field is OPTIONAL.
   * The value of this field MUST NOT be negative.
   */
  'used'?: (number | string | Long);
  /**
   * Units by which values are measured. This field is REQUIRED.
   */
  'unit'?: (_csi_v1_VolumeUsage_Unit);
}

export interface VolumeUsage__Output {
  /**
   * The available capacity in specified Unit. This field is OPTIONAL.
   * The value of this field MUST NOT be negative.
   */
  'available': (string);
  /**
   * The total capacity in specified Unit. This field is REQUIRED.
   * The value of this field MUST NOT be negative.
   */
  'total': (string);
  /**
   * The used capacity in specified Unit. This field is OPTIONAL.
   * The value of this field MUST NOT be negative.
   */
  'used': (string);
  /**
   * Units by which values are measured. This field is REQUIRED.
   */
  'unit': (_csi_v1_VolumeUsage_Unit__Output);
}
