// Original file: proto/csi/v1/csi.proto

import type { Volume as _csi_v1_Volume, Volume__Output as _csi_v1_Volume__Output } from '../../csi/v1/Volume.ts';
import type { VolumeCondition as _csi_v1_VolumeCondition, VolumeCondition__Output as _csi_v1_VolumeCondition__Output } from '../../csi/v1/VolumeCondition.ts';

export interface _csi_v1_ControllerGetVolumeResponse_VolumeStatus {
  /**
   * A list of all the `node_id` of nodes that this volume is
   * controller published on.
   * This field is OPTIONAL.
   * This field MUST be specified if the LIST_VOLUMES_PUBLISHED_NODES
   * controller capability is supported.
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

export interface _csi_v1_ControllerGetVolumeResponse_VolumeStatus__Output {
  /**
   * A list of all the `node_id` of nodes that this volume is
   * controller published on.
   * This field is OPTIONAL.
   * This field MUST be specified if the LIST_VOLUMES_PUBLISHED_NODES
   * controller capability is supported.
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

export interface ControllerGetVolumeResponse {
  /**
   * This field is REQUIRED
   */
  'volume'?: (_csi_v1_Volume | null);
  /**
   * This field is REQUIRED.
   */
  'status'?: (_csi_v1_ControllerGetVolumeResponse_VolumeStatus | null);
}

export interface ControllerGetVolumeResponse__Output {
  /**
   * This field is REQUIRED
   */
  'volume': (_csi_v1_Volume__Output | null);
  /**
   * This field is REQUIRED.
   */
  'status': (_csi_v1_ControllerGetVolumeResponse_VolumeStatus__Output | null);
}
