// Original file: proto/csi/v1/csi.proto

import type { Snapshot as _csi_v1_Snapshot, Snapshot__Output as _csi_v1_Snapshot__Output } from '../../csi/v1/Snapshot.ts';

export interface CreateSnapshotResponse {
  /**
   * Contains all attributes of the newly created snapshot that are
   * relevant to the CO along with information required by the Plugin
   * to uniquely identify the snapshot. This field is REQUIRED.
   */
  'snapshot'?: (_csi_v1_Snapshot | null);
}

export interface CreateSnapshotResponse__Output {
  /**
   * Contains all attributes of the newly created snapshot that are
   * relevant to the CO along with information required by the Plugin
   * to uniquely identify the snapshot. This field is REQUIRED.
   */
  'snapshot': (_csi_v1_Snapshot__Output | null);
}
