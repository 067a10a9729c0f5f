// Original file: proto/csi/v1/csi.proto

import type { CapacityRange as _csi_v1_CapacityRange, CapacityRange__Output as _csi_v1_CapacityRange__Output } from '../../csi/v1/CapacityRange.ts';
import type { VolumeCapability as _csi_v1_VolumeCapability, VolumeCapability__Output as _csi_v1_VolumeCapability__Output } from '../../csi/v1/VolumeCapability.ts';

export interface NodeExpandVolumeRequest {
  /**
   * The ID of the volume. This field is REQUIRED.
   */
  'volume_id'?: (string);
  /**
   * The path on which volume is available. This field is REQUIRED.
   * This field overrides the general CSI size limit.
   * SP SHOULD support the maximum path length allowed by the operating
   * system/filesystem, but, at a minimum, SP MUST accept a max path
   * length of at least 128 bytes.
   */
  'volume_path'?: (string);
  /**
   * This allows CO to specify the capacity requirements of the volume
   * after expansion. If capacity_range is omitted then a plugin MAY
   * inspect the file system of the volume to determine the maximum
   * capacity to which the volume can be expanded. In such cases a
   * plugin MAY expand the volume to its maximum capacity.
   * This field is OPTIONAL.
   */
  'capacity_range'?: (_csi_v1_CapacityRange | null);
  /**
   * The path where the volume is staged, if the plugin has the
   * STAGE_UNSTAGE_VOLUME capability, otherwise empty.
   * If not empty, it MUST be an absolute path in the root
   * filesystem of the process serving this request.
   * This field is OPTIONAL.
   * This field overrides the general CSI size limit.
   * SP SHOULD support the maximum path length allowed by the operating
   * system/filesystem, but, at a minimum, SP MUST accept a max path
   * length of at least 128 bytes.
   */
  'staging_target_path'?: (string);
  /**
   * Volume capability describing how the CO intends to use this volume.
   * This allows SP to determine if volume is being used as a block
   * device or mounted file system. For example - if volume is being
   * used as a block device the SP MAY choose to skip expanding the
   * filesystem in NodeExpandVolume implementation but still perform
   * rest of the housekeeping needed for expanding the volume. If
   * volume_capability is omitted the SP MAY determine
   * access_type from given volume_path for the volume and perform
   * node expansion. This is an OPTIONAL field.
   */
  'volume_capability'?: (_csi_v1_VolumeCapability | null);
  /**
   * Secrets required by plugin to complete node expand volume request.
   * This field is OPTIONAL. Refer to the `Secrets Requirements`
   * section on how to use this field.
   */
  'secrets'?: ({[key: string]: string});
}

export interface NodeExpandVolumeRequest__Output {
  /**
   * The ID of the volume. This field is REQUIRED.
   */
  'volume_id': (string);
  /**
   * The path on which volume is available. This field is REQUIRED.
   * This field overrides the general CSI size limit.
   * SP SHOULD support the maximum path length allowed by the operating
   * system/filesystem, but, at a minimum, SP MUST accept a max path
   * length of at least 128 bytes.
   */
  'volume_path': (string);
  /**
   * This allows CO to specify the capacity requirements of the volume
   * after expansion. If capacity_range is omitted then a plugin MAY
   * inspect the file system of the volume to determine the maximum
   * capacity to which the volume can be expanded. In such cases a
   * plugin MAY expand the volume to its maximum capacity.
   * This field is OPTIONAL.
   */
  'capacity_range': (_csi_v1_CapacityRange__Output | null);
  /**
   * The path where the volume is staged, if the plugin has the
   * STAGE_UNSTAGE_VOLUME capability, otherwise empty.
   * If not empty, it MUST be an absolute path in the root
   * filesystem of the process serving this request.
   * This field is OPTIONAL.
   * This field overrides the general CSI size limit.
   * SP SHOULD support the maximum path length allowed by the operating
   * system/filesystem, but, at a minimum, SP MUST accept a max path
   * length of at least 128 bytes.
   */
  'staging_target_path': (string);
  /**
   * Volume capability describing how the CO intends to use this volume.
   * This allows SP to determine if volume is being used as a block
   * device or mounted file system. For example - if volume is being
   * used as a block device the SP MAY choose to skip expanding the
   * filesystem in NodeExpandVolume implementation but still perform
   * rest of the housekeeping needed for expanding the volume. If
   * volume_capability is omitted the SP MAY determine
   * access_type from given volume_path for the volume and perform
   * node expansion. This is an OPTIONAL field.
   */
  'volume_capability': (_csi_v1_VolumeCapability__Output | null);
  /**
   * Secrets required by plugin to complete node expand volume request.
   * This field is OPTIONAL. Refer to the `Secrets Requirements`
   * section on how to use this field.
   */
  'secrets': ({[key: string]: string});
}
