// Original file: proto/csi/v1/csi.proto


export interface DeleteSnapshotRequest {
  /**
   * The ID of the snapshot to be deleted.
   * This field is REQUIRED.
   */
  'snapshot_id'?: (string);
  /**
   * Secrets required by plugin to complete snapshot deletion request.
   * This field is OPTIONAL. Refer to the `Secrets Requirements`
   * section on how to use this field.
   */
  'secrets'?: ({[key: string]: string});
}

export interface DeleteSnapshotRequest__Output {
  /**
   * The ID of the snapshot to be deleted.
   * This field is REQUIRED.
   */
  'snapshot_id': (string);
  /**
   * Secrets required by plugin to complete snapshot deletion request.
   * This field is OPTIONAL. Refer to the `Secrets Requirements`
   * section on how to use this field.
   */
  'secrets': ({[key: string]: string});
}
