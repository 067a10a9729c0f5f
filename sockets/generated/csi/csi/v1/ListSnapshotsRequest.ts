// Original file: proto/csi/v1/csi.proto


/**
 * List all snapshots on the storage system regardless of how they were
 * created.
 */
export interface ListSnapshotsRequest {
  /**
   * If specified (non-zero value), the Plugin MUST NOT return more
   * entries than this number in the response. If the actual number of
   * entries is more than this number, the Plugin MUST set `next_token`
   * in the response which can be used to get the next page of entries
   * in the subsequent `ListSnapshots` call. This field is OPTIONAL. If
   * not specified (zero value), it means there is no restriction on the
   * number of entries that can be returned.
   * The value of this field MUST NOT be negative.
   */
  'max_entries'?: (number);
  /**
   * A token to specify where to start paginating. Set this field to
   * `next_token` returned by a previous `ListSnapshots` call to get the
   * next page of entries. This field is OPTIONAL.
   * An empty string is equal to an unspecified field value.
   */
  'starting_token'?: (string);
  /**
   * Identity information for the source volume. This field is OPTIONAL.
   * It can be used to list snapshots by volume.
   */
  'source_volume_id'?: (string);
  /**
   * Identity information for a specific snapshot. This field is
   * OPTIONAL. It can be used to list only a specific snapshot.
   * ListSnapshots will return with current snapshot information
   * and will not block if the snapshot is being processed after
   * it is cut.
   */
  'snapshot_id'?: (string);
  /**
   * Secrets required by plugin to complete ListSnapshot request.
   * This field is OPTIONAL. Refer to the `Secrets Requirements`
   * section on how to use this field.
   */
  'secrets'?: ({[key: string]: string});
}

/**
 * List all snapshots on the storage system regardless of how they were
 * created.
 */
export interface ListSnapshotsRequest__Output {
  /**
   * If specified (non-zero value), the Plugin MUST NOT return more
   * entries than this number in the response. If the actual number of
   * entries is more than this number, the Plugin MUST set `next_token`
   * in the response which can be used to get the next page of entries
   * in the subsequent `ListSnapshots` call. This field is OPTIONAL. If
   * not specified (zero value), it means there is no restriction on the
   * number of entries that can be returned.
   * The value of this field MUST NOT be negative.
   */
  'max_entries': (number);
  /**
   * A token to specify where to start paginating. Set this field to
   * `next_token` returned by a previous `ListSnapshots` call to get the
   * next page of entries. This field is OPTIONAL.
   * An empty string is equal to an unspecified field value.
   */
  'starting_token': (string);
  /**
   * Identity information for the source volume. This field is OPTIONAL.
   * It can be used to list snapshots by volume.
   */
  'source_volume_id': (string);
  /**
   * Identity information for a specific snapshot. This field is
   * OPTIONAL. It can be used to list only a specific snapshot.
   * ListSnapshots will return with current snapshot information
   * and will not block if the snapshot is being processed after
   * it is cut.
   */
  'snapshot_id': (string);
  /**
   * Secrets required by plugin to complete ListSnapshot request.
   * This field is OPTIONAL. Refer to the `Secrets Requirements`
   * section on how to use this field.
   */
  'secrets': ({[key: string]: string});
}
