// Original file: proto/csi/v1/csi.proto

import type { GroupControllerServiceCapability as _csi_v1_GroupControllerServiceCapability, GroupControllerServiceCapability__Output as _csi_v1_GroupControllerServiceCapability__Output } from '../../csi/v1/GroupControllerServiceCapability.ts';

export interface GroupControllerGetCapabilitiesResponse {
  /**
   * All the capabilities that the group controller service supports.
   * This field is OPTIONAL.
   */
  'capabilities'?: (_csi_v1_GroupControllerServiceCapability)[];
}

export interface GroupControllerGetCapabilitiesResponse__Output {
  /**
   * All the capabilities that the group controller service supports.
   * This field is OPTIONAL.
   */
  'capabilities': (_csi_v1_GroupControllerServiceCapability__Output)[];
}
