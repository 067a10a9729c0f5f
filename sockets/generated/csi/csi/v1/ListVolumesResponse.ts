// Original file: proto/csi/v1/csi.proto

import type { VolumeCondition as _csi_v1_VolumeCondition, VolumeCondition__Output as _csi_v1_VolumeCondition__Output } from '../../csi/v1/VolumeCondition.ts';
import type { Volume as _csi_v1_Volume, Volume__Output as _csi_v1_Volume__Output } from '../../csi/v1/Volume.ts';

export interface _csi_v1_ListVolumesResponse_Entry {
  /**
   * This field is REQUIRED
   */
  'volume'?: (_csi_v1_Volume | null);
  /**
   * This field is OPTIONAL. This field MUST be specified if the
   * LIST_VOLUMES_PUBLISHED_NODES controller capability is
   * supported.
   */
  'status'?: (_csi_v1_ListVolumesResponse_VolumeStatus | null);
}

export interface _csi_v1_ListVolumesResponse_Entry__Output {
  /**
   * This field is REQUIRED
   */
  'volume': (_csi_v1_Volume__Output | null);
  /**
   * This field is OPTIONAL. This field MUST be specified if the
   * LIST_VOLUMES_PUBLISHED_NODES controller capability is
   * supported.
   */
  'status': (_csi_v1_ListVolumesResponse_VolumeStatus__Output | null);
}

export interface _csi_v1_ListVolumesResponse_VolumeStatus {
  /**
   * A list of all `node_id` of nodes that the volume in this entry
   * is controller published on.
   * This field is OPTIONAL. If it is not specified and the SP has
   * the LIST_VOLUMES_PUBLISHED_NODES controller capability, the CO
   * MAY assume the volume is not controller published to any nodes.
   * If the field is not specified and the SP does not have the
   * LIST_VOLUMES_PUBLISHED_NODES controller capability, the CO MUST
   * not interpret this field.
   * published_node_ids MAY include nodes not published to or
   * reported by the SP. The CO MUST be resilient to that.
   */
  'published_node_ids'?: (string)[];
  /**
   * Information about the current condition of the volume.
   * This field is OPTIONAL.
   * This field MUST be specified if the
   * VOLUME_CONDITION controller capability is supported.
   */
  'volume_condition'?: (_csi_v1_VolumeCondition | null);
}

export interface _csi_v1_ListVolumesResponse_VolumeStatus__Output {
  /**
   * A list of all `node_id` of nodes that the volume in this entry
   * is controller published on.
   * This field is OPTIONAL. If it is not specified and the SP has
   * the LIST_VOLUMES_PUBLISHED_NODES controller capability, the CO
   * MAY assume the volume is not controller published to any nodes.
   * If the field is not specified and the SP does not have the
   * LIST_VOLUMES_PUBLISHED_NODES controller capability, the CO MUST
   * not interpret this field.
   * published_node_ids MAY include nodes not published to or
   * reported by the SP. The CO MUST be resilient to that.
   */
  'published_node_ids': (string)[];
  /**
   * Information about the current condition of the volume.
   * This field is OPTIONAL.
   * This field MUST be specified if the
   * VOLUME_CONDITION controller capability is supported.
   */
  'volume_condition': (_csi_v1_VolumeCondition__Output | null);
}

export interface ListVolumesResponse {
  'entries'?: (_csi_v1_ListVolumesResponse_Entry)[];
  /**
   * This token allows you to get the next page of entries for
   * `ListVolumes` request. If the number of entries is larger than
   * `max_entries`, use the `next_token` as a value for the
   * `starting_token` field in the next `ListVolumes` request. This
   * field is OPTIONAL.
   * An empty string is equal to an unspecified field value.
   */
  'next_token'?: (string);
}

export interface ListVolumesResponse__Output {
  'entries': (_csi_v1_ListVolumesResponse_Entry__Output)[];
  /**
   * This token allows you to get the next page of entries for
   * `ListVolumes` request. If the number of entries is larger than
   * `max_entries`, use the `next_token` as a value for the
   * `starting_token` field in the next `ListVolumes` request. This
   * field is OPTIONAL.
   * An empty string is equal to an unspecified field value.
   */
  'next_token': (string);
}
