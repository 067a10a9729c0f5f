// Original file: proto/csi/v1/csi.proto

import type { Volume as _csi_v1_Volume, Volume__Output as _csi_v1_Volume__Output } from '../../csi/v1/Volume.ts';

export interface CreateVolumeResponse {
  /**
   * Contains all attributes of the newly created volume that are
   * relevant to the CO along with information required by the Plugin
   * to uniquely identify the volume. This field is REQUIRED.
   */
  'volume'?: (_csi_v1_Volume | null);
}

export interface CreateVolumeResponse__Output {
  /**
   * Contains all attributes of the newly created volume that are
   * relevant to the CO along with information required by the Plugin
   * to uniquely identify the volume. This field is REQUIRED.
   */
  'volume': (_csi_v1_Volume__Output | null);
}
