// Original file: proto/csi/v1/csi.proto

import type { VolumeCapability as _csi_v1_VolumeCapability, VolumeCapability__Output as _csi_v1_VolumeCapability__Output } from '../../csi/v1/VolumeCapability.ts';

export interface ValidateVolumeCapabilitiesRequest {
  /**
   * The ID of the volume to check. This field is REQUIRED.
   */
  'volume_id'?: (string);
  /**
   * Volume context as returned by SP in
   * CreateVolumeResponse.Volume.volume_context.
   * This field is OPTIONAL and MUST match the volume_context of the
   * volume identified by `volume_id`.
   */
  'volume_context'?: ({[key: string]: string});
  /**
   * The capabilities that the CO wants to check for the volume. This
   * call SHALL return "confirmed" only if all the volume capabilities
   * specified below are supported. This field is REQUIRED.
   */
  'volume_capabilities'?: (_csi_v1_VolumeCapability)[];
  /**
   * See CreateVolumeRequest.parameters.
   * This field is OPTIONAL.
   */
  'parameters'?: ({[key: string]: string});
  /**
   * Secrets required by plugin to complete volume validation request.
   * This field is OPTIONAL. Refer to the `Secrets Requirements`
   * section on how to use this field.
   */
  'secrets'?: ({[key: string]: string});
  /**
   * See CreateVolumeRequest.mutable_parameters.
   * This field is OPTIONAL.
   */
  'mutable_parameters'?: ({[key: string]: string});
}

export interface ValidateVolumeCapabilitiesRequest__Output {
  /**
   * The ID of the volume to check. This field is REQUIRED.
   */
  'volume_id': (string);
  /**
   * Volume context as returned by SP in
   * CreateVolumeResponse.Volume.volume_context.
   * This field is OPTIONAL and MUST match the volume_context of the
   * volume identified by `volume_id`.
   */
  'volume_context': ({[key: string]: string});
  /**
   * The capabilities that the CO wants to check for the volume. This
   * call SHALL return "confirmed" only if all the volume capabilities
   * specified below are supported. This field is REQUIRED.
   */
  'volume_capabilities': (_csi_v1_VolumeCapability__Output)[];
  /**
   * See CreateVolumeRequest.parameters.
   * This field is OPTIONAL.
   */
  'parameters': ({[key: string]: string});
  /**
   * Secrets required by plugin to complete volume validation request.
   * This field is OPTIONAL. Refer to the `Secrets Requirements`
   * section on how to use this field.
   */
  'secrets': ({[key: string]: string});
  /**
   * See CreateVolumeRequest.mutable_parameters.
   * This field is OPTIONAL.
   */
  'mutable_parameters': ({[key: string]: string});
}
