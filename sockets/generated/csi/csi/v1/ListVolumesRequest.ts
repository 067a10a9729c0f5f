// Original file: proto/csi/v1/csi.proto


export interface ListVolumesRequest {
  /**
   * If specified (non-zero value), the Plugin MUST NOT return more
   * entries than this number in the response. If the actual number of
   * entries is more than this number, the Plugin MUST set `next_token`
   * in the response which can be used to get the next page of entries
   * in the subsequent `ListVolumes` call. This field is OPTIONAL. If
   * not specified (zero value), it means there is no restriction on the
   * number of entries that can be returned.
   * The value of this field MUST NOT be negative.
   */
  'max_entries'?: (number);
  /**
   * A token to specify where to start paginating. Set this field to
   * `next_token` returned by a previous `ListVolumes` call to get the
   * next page of entries. This field is OPTIONAL.
   * An empty string is equal to an unspecified field value.
   */
  'starting_token'?: (string);
}

export interface ListVolumesRequest__Output {
  /**
   * If specified (non-zero value), the Plugin MUST NOT return more
   * entries than this number in the response. If the actual number of
   * entries is more than this number, the Plugin MUST set `next_token`
   * in the response which can be used to get the next page of entries
   * in the subsequent `ListVolumes` call. This field is OPTIONAL. If
   * not specified (zero value), it means there is no restriction on the
   * number of entries that can be returned.
   * The value of this field MUST NOT be negative.
   */
  'max_entries': (number);
  /**
   * A token to specify where to start paginating. Set this field to
   * `next_token` returned by a previous `ListVolumes` call to get the
   * next page of entries. This field is OPTIONAL.
   * An empty string is equal to an unspecified field value.
   */
  'starting_token': (string);
}
