// Original file: proto/csi/v1/csi.proto

import type { VolumeUsage as _csi_v1_VolumeUsage, VolumeUsage__Output as _csi_v1_VolumeUsage__Output } from '../../csi/v1/VolumeUsage.ts';
import type { VolumeCondition as _csi_v1_VolumeCondition, VolumeCondition__Output as _csi_v1_VolumeCondition__Output } from '../../csi/v1/VolumeCondition.ts';

export interface NodeGetVolumeStatsResponse {
  /**
   * This field is OPTIONAL.
   */
  'usage'?: (_csi_v1_VolumeUsage)[];
  /**
   * Information about the current condition of the volume.
   * This field is OPTIONAL.
   * This field MUST be specified if the VOLUME_CONDITION node
   * capability is supported.
   */
  'volume_condition'?: (_csi_v1_VolumeCondition | null);
}

export interface NodeGetVolumeStatsResponse__Output {
  /**
   * This field is OPTIONAL.
   */
  'usage': (_csi_v1_VolumeUsage__Output)[];
  /**
   * Information about the current condition of the volume.
   * This field is OPTIONAL.
   * This field MUST be specified if the VOLUME_CONDITION node
   * capability is supported.
   */
  'volume_condition': (_csi_v1_VolumeCondition__Output | null);
}
