// Original file: proto/csi/v1/csi.proto

import type { Snapshot as _csi_v1_Snapshot, Snapshot__Output as _csi_v1_Snapshot__Output } from '../../csi/v1/Snapshot.ts';

export interface _csi_v1_ListSnapshotsResponse_Entry {
  'snapshot'?: (_csi_v1_Snapshot | null);
}

export interface _csi_v1_ListSnapshotsResponse_Entry__Output {
  'snapshot': (_csi_v1_Snapshot__Output | null);
}

export interface ListSnapshotsResponse {
  'entries'?: (_csi_v1_ListSnapshotsResponse_Entry)[];
  /**
   * This token allows you to get the next page of entries for
   * `ListSnapshots` request. If the number of entries is larger than
   * `max_entries`, use the `next_token` as a value for the
   * `starting_token` field in the next `ListSnapshots` request. This
   * field is OPTIONAL.
   * An empty string is equal to an unspecified field value.
   */
  'next_token'?: (string);
}

export interface ListSnapshotsResponse__Output {
  'entries': (_csi_v1_ListSnapshotsResponse_Entry__Output)[];
  /**
   * This token allows you to get the next page of entries for
   * `ListSnapshots` request. If the number of entries is larger than
   * `max_entries`, use the `next_token` as a value for the
   * `starting_token` field in the next `ListSnapshots` request. This
   * field is OPTIONAL.
   * An empty string is equal to an unspecified field value.
   */
  'next_token': (string);
}
