// Original file: proto/csi/v1/csi.proto


export interface DeleteVolumeGroupSnapshotRequest {
  /**
   * The ID of the group snapshot to be deleted.
   * This field is REQUIRED.
   */
  'group_snapshot_id'?: (string);
  /**
   * A list of snapshot IDs that are part of this group snapshot.
   * If SP does not need to rely on this field to delete the snapshots
   * in the group, it SHOULD check this field and report an error
   * if it has the ability to detect a mismatch.
   * Some SPs require this list to delete the snapshots in the group.
   * If SP needs to use this field to delete the snapshots in the
   * group, it MUST report an error if it has the ability to detect
   * a mismatch.
   * This field is REQUIRED.
   */
  'snapshot_ids'?: (string)[];
  /**
   * Secrets required by plugin to complete group snapshot deletion
   * request.
   * This field is OPTIONAL. Refer to the `Secrets Requirements`
   * section on how to use this field.
   * The secrets provided in this field SHOULD be the same for
   * all group snapshot operations on the same group snapshot.
   */
  'secrets'?: ({[key: string]: string});
}

export interface DeleteVolumeGroupSnapshotRequest__Output {
  /**
   * The ID of the group snapshot to be deleted.
   * This field is REQUIRED.
   */
  'group_snapshot_id': (string);
  /**
   * A list of snapshot IDs that are part of this group snapshot.
   * If SP does not need to rely on this field to delete the snapshots
   * in the group, it SHOULD check this field and report an error
   * if it has the ability to detect a mismatch.
   * Some SPs require this list to delete the snapshots in the group.
   * If SP needs to use this field to delete the snapshots in the
   * group, it MUST report an error if it has the ability to detect
   * a mismatch.
   * This field is REQUIRED.
   */
  'snapshot_ids': (string)[];
  /**
   * Secrets required by plugin to complete group snapshot deletion
   * request.
   * This field is OPTIONAL. Refer to the `Secrets Requirements`
   * section on how to use this field.
   * The secrets provided in this field SHOULD be the same for
   * all group snapshot operations on the same group snapshot.
   */
  'secrets': ({[key: string]: string});
}
