// Original file: proto/csi/v1/csi.proto

import type { VolumeGroupSnapshot as _csi_v1_VolumeGroupSnapshot, VolumeGroupSnapshot__Output as _csi_v1_VolumeGroupSnapshot__Output } from '../../csi/v1/VolumeGroupSnapshot.ts';

export interface GetVolumeGroupSnapshotResponse {
  /**
   * This field is REQUIRED
   */
  'group_snapshot'?: (_csi_v1_VolumeGroupSnapshot | null);
}

export interface GetVolumeGroupSnapshotResponse__Output {
  /**
   * This field is REQUIRED
   */
  'group_snapshot': (_csi_v1_VolumeGroupSnapshot__Output | null);
}
