// Original file: proto/csi/v1/csi.proto

import type { VolumeCapability as _csi_v1_VolumeCapability, VolumeCapability__Output as _csi_v1_VolumeCapability__Output } from '../../csi/v1/VolumeCapability.ts';

export interface NodePublishVolumeRequest {
  /**
   * The ID of the volume to publish. This field is REQUIRED.
   */
  'volume_id'?: (string);
  /**
   * The CO SHALL set this field to the value returned by
   * `ControllerPublishVolume` if the corresponding Controller Plugin
   * has `PUBLISH_UNPUBLISH_VOLUME` controller capability, and SHALL be
   * left unset if the corresponding Controller Plugin does not have
   * this capability. This is an OPTIONAL field.
   */
  'publish_context'?: ({[key: string]: string});
  /**
   * The path to which the volume was staged by `NodeStageVolume`.
   * It MUST be an absolute path in the root filesystem of the process
   * serving this request.
   * It MUST be set if the Node Plugin implements the
   * `STAGE_UNSTAGE_VOLUME` node capability.
   * This is an OPTIONAL field.
   * This field overrides the general CSI size limit.
   * SP SHOULD support the maximum path length allowed by the operating
   * system/filesystem, but, at a minimum, SP MUST accept a max path
   * length of at least 128 bytes.
   */
  'staging_target_path'?: (string);
  /**
   * The path to which the volume will be published. It MUST be an
   * absolute path in the root filesystem of the process serving this
   * request. The CO SHALL ensure uniqueness of target_path per volume.
   * The CO SHALL ensure that the parent directory of this path exists
   * and that the process serving the request has `read` and `write`
   * permissions to that parent directory.
   * For volumes with an access type of block, the SP SHALL place the
   * block device at target_path.
   * For volumes with an access type of mount, the SP SHALL place the
   * mounted directory at target_path.
   * Creation of target_path is the responsibility of the SP.
   * This is a REQUIRED field.
   * This field overrides the general CSI size limit.
   * SP SHOULD support the maximum path length allowed by the operating
   * system/filesystem, but, at a minimum, SP MUST accept a max path
   * length of at least 128 bytes.
   */
  'target_path'?: (string);
  /**
   * Volume capability describing how the CO intends to use this volume.
   * SP MUST ensure the CO can use the published volume as described.
   * Otherwise SP MUST return the appropriate gRPC error code.
   * This is a REQUIRED field.
   */
  'volume_capability'?: (_csi_v1_VolumeCapability | null);
  /**
   * Indicates SP MUST publish the volume in readonly mode.
   * This field is REQUIRED.
   */
  'readonly'?: (boolean);
  /**
   * Secrets required by plugin to complete node publish volume request.
   * This field is OPTIONAL. Refer to the `Secrets Requirements`
   * section on how to use this field.
   */
  'secrets'?: ({[key: string]: string});
  /**
   * Volume context as returned by SP in
   * CreateVolumeResponse.Volume.volume_context.
   * This field is OPTIONAL and MUST match the volume_context of the
   * volume identified by `volume_id`.
   */
  'volume_context'?: ({[key: string]: string});
}

export interface NodePublishVolumeRequest__Output {
  /**
   * The ID of the volume to publish. This field is REQUIRED.
   */
  'volume_id': (string);
  /**
   * The CO SHALL set this field to the value returned by
   * `ControllerPublishVolume` if the corresponding Controller Plugin
   * has `PUBLISH_UNPUBLISH_VOLUME` controller capability, and SHALL be
   * left unset if the corresponding Controller Plugin does not have
   * this capability. This is an OPTIONAL field.
   */
  'publish_context': ({[key: string]: string});
  /**
   * The path to which the volume was staged by `NodeStageVolume`.
   * It MUST be an absolute path in the root filesystem of the process
   * serving this request.
   * It MUST be set if the Node Plugin implements the
   * `STAGE_UNSTAGE_VOLUME` node capability.
   * This is an OPTIONAL field.
   * This field overrides the general CSI size limit.
   * SP SHOULD support the maximum path length allowed by the operating
   * system/filesystem, but, at a minimum, SP MUST accept a max path
   * length of at least 128 bytes.
   */
  'staging_target_path': (string);
  /**
   * The path to which the volume will be published. It MUST be an
   * absolute path in the root filesystem of the process serving this
   * request. The CO SHALL ensure uniqueness of target_path per volume.
   * The CO SHALL ensure that the parent directory of this path exists
   * and that the process serving the request has `read` and `write`
   * permissions to that parent directory.
   * For volumes with an access type of block, the SP SHALL place the
   * block device at target_path.
   * For volumes with an access type of mount, the SP SHALL place the
   * mounted directory at target_path.
   * Creation of target_path is the responsibility of the SP.
   * This is a REQUIRED field.
   * This field overrides the general CSI size limit.
   * SP SHOULD support the maximum path length allowed by the operating
   * system/filesystem, but, at a minimum, SP MUST accept a max path
   * length of at least 128 bytes.
   */
  'target_path': (string);
  /**
   * Volume capability describing how the CO intends to use this volume.
   * SP MUST ensure the CO can use the published volume as described.
   * Otherwise SP MUST return the appropriate gRPC error code.
   * This is a REQUIRED field.
   */
  'volume_capability': (_csi_v1_VolumeCapability__Output | null);
  /**
   * Indicates SP MUST publish the volume in readonly mode.
   * This field is REQUIRED.
   */
  'readonly': (boolean);
  /**
   * Secrets required by plugin to complete node publish volume request.
   * This field is OPTIONAL. Refer to the `Secrets Requirements`
   * section on how to use this field.
   */
  'secrets': ({[key: string]: string});
  /**
   * Volume context as returned by SP in
   * CreateVolumeResponse.Volume.volume_context.
   * This field is OPTIONAL and MUST match the volume_context of the
   * volume identified by `volume_id`.
   */
  'volume_context': ({[key: string]: string});
}
