// Original file: proto/csi/v1/csi.proto

import type { ControllerServiceCapability as _csi_v1_ControllerServiceCapability, ControllerServiceCapability__Output as _csi_v1_ControllerServiceCapability__Output } from '../../csi/v1/ControllerServiceCapability.ts';

export interface ControllerGetCapabilitiesResponse {
  /**
   * All the capabilities that the controller service supports. This
   * field is OPTIONAL.
   */
  'capabilities'?: (_csi_v1_ControllerServiceCapability)[];
}

export interface ControllerGetCapabilitiesResponse__Output {
  /**
   * All the capabilities that the controller service supports. This
   * field is OPTIONAL.
   */
  'capabilities': (_csi_v1_ControllerServiceCapability__Output)[];
}
