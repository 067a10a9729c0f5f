// Original file: proto/csi/v1/csi.proto

import type { CapacityRange as _csi_v1_CapacityRange, CapacityRange__Output as _csi_v1_CapacityRange__Output } from '../../csi/v1/CapacityRange.ts';
import type { VolumeCapability as _csi_v1_VolumeCapability, VolumeCapability__Output as _csi_v1_VolumeCapability__Output } from '../../csi/v1/VolumeCapability.ts';

export interface ControllerExpandVolumeRequest {
  /**
   * The ID of the volume to expand. This field is REQUIRED.
   */
  'volume_id'?: (string);
  /**
   * This allows CO to specify the capacity requirements of the volume
   * after expansion. This field is REQUIRED.
   */
  'capacity_range'?: (_csi_v1_CapacityRange | null);
  /**
   * Secrets required by the plugin for expanding the volume.
   * This field is OPTIONAL.
   */
  'secrets'?: ({[key: string]: string});
  /**
   * Volume capability describing how the CO intends to use this volume.
   * This allows SP to determine if volume is being used as a block
   * device or mounted file system. For example - if volume is
   * being used as a block device - the SP MAY set
   * node_expansion_required to false in ControllerExpandVolumeResponse
   * to skip invocation of NodeExpandVolume on the node by the CO.
   * This is an OPTIONAL field.
   */
  'volume_capability'?: (_csi_v1_VolumeCapability | null);
}

export interface ControllerExpandVolumeRequest__Output {
  /**
   * The ID of the volume to expand. This field is REQUIRED.
   */
  'volume_id': (string);
  /**
   * This allows CO to specify the capacity requirements of the volume
   * after expansion. This field is REQUIRED.
   */
  'capacity_range': (_csi_v1_CapacityRange__Output | null);
  /**
   * Secrets required by the plugin for expanding the volume.
   * This field is OPTIONAL.
   */
  'secrets': ({[key: string]: string});
  /**
   * Volume capability describing how the CO intends to use this volume.
   * This allows SP to determine if volume is being used as a block
   * device or mounted file system. For example - if volume is
   * being used as a block device - the SP MAY set
   * node_expansion_required to false in ControllerExpandVolumeResponse
   * to skip invocation of NodeExpandVolume on the node by the CO.
   * This is an OPTIONAL field.
   */
  'volume_capability': (_csi_v1_VolumeCapability__Output | null);
}
