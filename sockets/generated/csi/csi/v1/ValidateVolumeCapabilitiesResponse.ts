// Original file: proto/csi/v1/csi.proto

import type { VolumeCapability as _csi_v1_VolumeCapability, VolumeCapability__Output as _csi_v1_VolumeCapability__Output } from '../../csi/v1/VolumeCapability.ts';

export interface _csi_v1_ValidateVolumeCapabilitiesResponse_Confirmed {
  /**
   * Volume context validated by the plugin.
   * This field is OPTIONAL.
   */
  'volume_context'?: ({[key: string]: string});
  /**
   * Volume capabilities supported by the plugin.
   * This field is REQUIRED.
   */
  'volume_capabilities'?: (_csi_v1_VolumeCapability)[];
  /**
   * The volume creation parameters validated by the plugin.
   * This field is OPTIONAL.
   */
  'parameters'?: ({[key: string]: string});
  /**
   * The volume creation mutable_parameters validated by the plugin.
   * This field is OPTIONAL.
   */
  'mutable_parameters'?: ({[key: string]: string});
}

export interface _csi_v1_ValidateVolumeCapabilitiesResponse_Confirmed__Output {
  /**
   * Volume context validated by the plugin.
   * This field is OPTIONAL.
   */
  'volume_context': ({[key: string]: string});
  /**
   * Volume capabilities supported by the plugin.
   * This field is REQUIRED.
   */
  'volume_capabilities': (_csi_v1_VolumeCapability__Output)[];
  /**
   * The volume creation parameters validated by the plugin.
   * This field is OPTIONAL.
   */
  'parameters': ({[key: string]: string});
  /**
   * The volume creation mutable_parameters validated by the plugin.
   * This field is OPTIONAL.
   */
  'mutable_parameters': ({[key: string]: string});
}

export interface ValidateVolumeCapabilitiesResponse {
  /**
   * Confirmed indicates to the CO the set of capabilities that the
   * plugin has validated. This field SHALL only be set to a non-empty
   * value for successful validation responses.
   * For successful validation responses, the CO SHALL compare the
   * fields of this message to the originally requested capabilities in
   * order to guard against an older plugin reporting "valid" for newer
   * capability fields that it does not yet understand.
   * This field is OPTIONAL.
   */
  'confirmed'?: (_csi_v1_ValidateVolumeCapabilitiesResponse_Confirmed | null);
  /**
   * Message to the CO if `confirmed` above is empty. This field is
   * OPTIONAL.
   * An empty string is equal to an unspecified field value.
   */
  'message'?: (string);
}

export interface ValidateVolumeCapabilitiesResponse__Output {
  /**
   * Confirmed indicates to the CO the set of capabilities that the
   * plugin has validated. This field SHALL only be set to a non-empty
   * value for successful validation responses.
   * For successful validation responses, the CO SHALL compare the
   * fields of this message to the originally requested capabilities in
   * order to guard against an older plugin reporting "valid" for newer
   * capability fields that it does not yet understand.
   * This field is OPTIONAL.
   */
  'confirmed': (_csi_v1_ValidateVolumeCapabilitiesResponse_Confirmed__Output | null);
  /**
   * Message to the CO if `confirmed` above is empty. This field is
   * OPTIONAL.
   * An empty string is equal to an unspecified field value.
   */
  'message': (string);
}
