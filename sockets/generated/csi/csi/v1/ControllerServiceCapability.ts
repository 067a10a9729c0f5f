// Original file: proto/csi/v1/csi.proto


export interface _csi_v1_ControllerServiceCapability_RPC {
  'type'?: (_csi_v1_ControllerServiceCapability_RPC_Type);
}

export interface _csi_v1_ControllerServiceCapability_RPC__Output {
  'type': (_csi_v1_ControllerServiceCapability_RPC_Type__Output);
}

// Original file: proto/csi/v1/csi.proto

export const _csi_v1_ControllerServiceCapability_RPC_Type = {
  UNKNOWN: 'UNKNOWN',
  CREATE_DELETE_VOLUME: 'CREATE_DELETE_VOLUME',
  PUBLISH_UNPUBLISH_VOLUME: 'PUBLISH_UNPUBLISH_VOLUME',
  LIST_VOLUMES: 'LIST_VOLUMES',
  GET_CAPACITY: 'GET_CAPACITY',
  /**
   * Currently the only way to consume a snapshot is to create
   * a volume from it. Therefore plugins supporting
   * CREATE_DELETE_SNAPSHOT MUST support creating volume from
   * snapshot.
   */
  CREATE_DELETE_SNAPSHOT: 'CREATE_DELETE_SNAPSHOT',
  LIST_SNAPSHOTS: 'LIST_SNAPSHOTS',
  /**
   * Plugins supporting volume cloning at the storage level MAY
   * report this capability. The source volume MUST be managed by
   * the same plugin. Not all volume sources and parameters
   * combinations MAY work.
   */
  CLONE_VOLUME: 'CLONE_VOLUME',
  /**
   * Indicates the SP supports ControllerPublishVolume.readonly
   * field.
   */
  PUBLISH_READONLY: 'PUBLISH_READONLY',
  /**
   * See VolumeExpansion for details.
   */
  EXPAND_VOLUME: 'EXPAND_VOLUME',
  /**
   * Indicates the SP supports the
   * ListVolumesResponse.entry.published_node_ids field and the
   * ControllerGetVolumeResponse.published_node_ids field.
   * The SP MUST also support PUBLISH_UNPUBLISH_VOLUME.
   */
  LIST_VOLUMES_PUBLISHED_NODES: 'LIST_VOLUMES_PUBLISHED_NODES',
  /**
   * Indicates that the Controller service can report volume
   * conditions.
   * An SP MAY implement `VolumeCondition` in only the Controller
   * Plugin, only the Node Plugin, or both.
   * If `VolumeCondition` is implemented in both the Controller and
   * Node Plugins, it SHALL report from different perspectives.
   * If for some reason Controller and Node Plugins report
   * misaligned volume conditions, CO SHALL assume the worst case
   * is the truth.
   * Note that, for alpha, `VolumeCondition` is intended be
   * informative for humans only, not for automation.
   */
  VOLUME_CONDITION: 'VOLUME_CONDITION',
  /**
   * Indicates the SP supports the ControllerGetVolume RPC.
   * This enables COs to, for example, fetch per volume
   * condition after a volume is provisioned.
   */
  GET_VOLUME: 'GET_VOLUME',
  /**
   * Indicates the SP supports the SINGLE_NODE_SINGLE_WRITER and/or
   * SINGLE_NODE_MULTI_WRITER access modes.
   * These access modes are intended to replace the
   * SINGLE_NODE_WRITER access mode to clarify the number of writers
   * for a volume on a single node. Plugins MUST accept and allow
   * use of the SINGLE_NODE_WRITER access mode when either
   * SINGLE_NODE_SINGLE_WRITER and/or SINGLE_NODE_MULTI_WRITER are
   * supported, in order to permit older COs to continue working.
   */
  SINGLE_NODE_MULTI_WRITER: 'SINGLE_NODE_MULTI_WRITER',
  /**
   * Indicates the SP supports modifying volume with mutable
   * parameters. See ControllerModifyVolume for details.
   */
  MODIFY_VOLUME: 'MODIFY_VOLUME',
} as const;

export type _csi_v1_ControllerServiceCapability_RPC_Type =
  | 'UNKNOWN'
  | 0
  | 'CREATE_DELETE_VOLUME'
  | 1
  | 'PUBLISH_UNPUBLISH_VOLUME'
  | 2
  | 'LIST_VOLUMES'
  | 3
  | 'GET_CAPACITY'
  | 4
  /**
   * Currently the only way to consume a snapshot is to create
   * a volume from it. Therefore plugins supporting
   * CREATE_DELETE_SNAPSHOT MUST support creating volume from
   * snapshot.
   */
  | 'CREATE_DELETE_SNAPSHOT'
  | 5
  | 'LIST_SNAPSHOTS'
  | 6
  /**
   * Plugins supporting volume cloning at the storage level MAY
   * report this capability. The source volume MUST be managed by
   * the same plugin. Not all volume sources and parameters
   * combinations MAY work.
   */
  | 'CLONE_VOLUME'
  | 7
  /**
   * Indicates the SP supports ControllerPublishVolume.readonly
   * field.
   */
  | 'PUBLISH_READONLY'
  | 8
  /**
   * See VolumeExpansion for details.
   */
  | 'EXPAND_VOLUME'
  | 9
  /**
   * Indicates the SP supports the
   * ListVolumesResponse.entry.published_node_ids field and the
   * ControllerGetVolumeResponse.published_node_ids field.
   * The SP MUST also support PUBLISH_UNPUBLISH_VOLUME.
   */
  | 'LIST_VOLUMES_PUBLISHED_NODES'
  | 10
  /**
   * Indicates that the Controller service can report volume
   * conditions.
   * An SP MAY implement `VolumeCondition` in only the Controller
   * Plugin, only the Node Plugin, or both.
   * If `VolumeCondition` is implemented in both the Controller and
   * Node Plugins, it SHALL report from different perspectives.
   * If for some reason Controller and Node Plugins report
   * misaligned volume conditions, CO SHALL assume the worst case
   * is the truth.
   * Note that, for alpha, `VolumeCondition` is intended be
   * informative for humans only, not for automation.
   */
  | 'VOLUME_CONDITION'
  | 11
  /**
   * Indicates the SP supports the ControllerGetVolume RPC.
   * This enables COs to, for example, fetch per volume
   * condition after a volume is provisioned.
   */
  | 'GET_VOLUME'
  | 12
  /**
   * Indicates the SP supports the SINGLE_NODE_SINGLE_WRITER and/or
   * SINGLE_NODE_MULTI_WRITER access modes.
   * These access modes are intended to replace the
   * SINGLE_NODE_WRITER access mode to clarify the number of writers
   * for a volume on a single node. Plugins MUST accept and allow
   * use of the SINGLE_NODE_WRITER access mode when either
   * SINGLE_NODE_SINGLE_WRITER and/or SINGLE_NODE_MULTI_WRITER are
   * supported, in order to permit older COs to continue working.
   */
  | 'SINGLE_NODE_MULTI_WRITER'
  | 13
  /**
   * Indicates the SP supports modifying volume with mutable
   * parameters. See ControllerModifyVolume for details.
   */
  | 'MODIFY_VOLUME'
  | 14

export type _csi_v1_ControllerServiceCapability_RPC_Type__Output = typeof _csi_v1_ControllerServiceCapability_RPC_Type[keyof typeof _csi_v1_ControllerServiceCapability_RPC_Type]

/**
 * Specifies a capability of the controller service.
 */
export interface ControllerServiceCapability {
  /**
   * RPC that the controller supports.
   */
  'rpc'?: (_csi_v1_ControllerServiceCapability_RPC | null);
  'type'?: "rpc";
}

/**
 * Specifies a capability of the controller service.
 */
export interface ControllerServiceCapability__Output {
  /**
   * RPC that the controller supports.
   */
  'rpc'?: (_csi_v1_ControllerServiceCapability_RPC__Output | null);
  'type'?: "rpc";
}
