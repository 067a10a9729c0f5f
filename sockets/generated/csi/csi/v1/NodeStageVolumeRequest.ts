// Original file: proto/csi/v1/csi.proto

import type { VolumeCapability as _csi_v1_VolumeCapability, VolumeCapability__Output as _csi_v1_VolumeCapability__Output } from '../../csi/v1/VolumeCapability.ts';

export interface NodeStageVolumeRequest {
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
   * The path to which the volume MAY be staged. It MUST be an
   * absolute path in the root filesystem of the process serving this
   * request, and MUST be a directory. The CO SHALL ensure that there
   * is only one `staging_target_path` per volume. The CO SHALL ensure
   * that the path is directory and that the process serving the
   * request has `read` and `write` permission to that directory. The
   * CO SHALL be responsible for creating the directory if it does not
   * exist.
   * This is a REQUIRED field.
   * This field overrides the general CSI size limit.
   * SP SHOULD support the maximum path length allowed by the operating
   * system/filesystem, but, at a minimum, SP MUST accept a max path
   * length of at least 128 bytes.
   */
  'staging_target_path'?: (string);
  /**
   * Volume capability describing how the CO intends to use this volume.
   * SP MUST ensure the CO can use the staged volume as described.
   * Otherwise SP MUST return the appropriate gRPC error code.
   * This is a REQUIRED field.
   */
  'volume_capability'?: (_csi_v1_VolumeCapability | null);
  /**
   * Secrets required by plugin to complete node stage volume request.
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

export interface NodeStageVolumeRequest__Output {
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
   * The path to which the volume MAY be staged. It MUST be an
   * absolute path in the root filesystem of the process serving this
   * request, and MUST be a directory. The CO SHALL ensure that there
   * is only one `staging_target_path` per volume. The CO SHALL ensure
   * that the path is directory and that the process serving the
   * request has `read` and `write` permission to that directory. The
   * CO SHALL be responsible for creating the directory if it does not
   * exist.
   * This is a REQUIRED field.
   * This field overrides the general CSI size limit.
   * SP SHOULD support the maximum path length allowed by the operating
   * system/filesystem, but, at a minimum, SP MUST accept a max path
   * length of at least 128 bytes.
   */
  'staging_target_path': (string);
  /**
   * Volume capability describing how the CO intends to use this volume.
   * SP MUST ensure the CO can use the staged volume as described.
   * Otherwise SP MUST return the appropriate gRPC error code.
   * This is a REQUIRED field.
   */
  'volume_capability': (_csi_v1_VolumeCapability__Output | null);
  /**
   * Secrets required by plugin to complete node stage volume request.
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
