// Original file: proto/csi/v1/csi.proto


export interface _csi_v1_NodeServiceCapability_RPC {
  'type'?: (_csi_v1_NodeServiceCapability_RPC_Type);
}

export interface _csi_v1_NodeServiceCapability_RPC__Output {
  'type': (_csi_v1_NodeServiceCapability_RPC_Type__Output);
}

// Original file: proto/csi/v1/csi.proto

export const _csi_v1_NodeServiceCapability_RPC_Type = {
  UNKNOWN: 'UNKNOWN',
  STAGE_UNSTAGE_VOLUME: 'STAGE_UNSTAGE_VOLUME',
  /**
   * If Plugin implements GET_VOLUME_STATS capability
   * then it MUST implement NodeGetVolumeStats RPC
   * call for fetching volume statistics.
   */
  GET_VOLUME_STATS: 'GET_VOLUME_STATS',
  /**
   * See VolumeExpansion for details.
   */
  EXPAND_VOLUME: 'EXPAND_VOLUME',
  /**
   * Indicates that the Node service can report volume conditions.
   * An SP MAY implement `VolumeCondition` in only the Node
   * Plugin, only the Controller Plugin, or both.
   * If `VolumeCondition` is implemented in both the Node and
   * Controller Plugins, it SHALL report from different
   * perspectives.
   * If for some reason Node and Controller Plugins report
   * misaligned volume conditions, CO SHALL assume the worst case
   * is the truth.
   * Note that, for alpha, `VolumeCondition` is intended to be
   * informative for humans only, not for automation.
   */
  VOLUME_CONDITION: 'VOLUME_CONDITION',
  /**
   * Indicates the SP supports the SINGLE_NODE_SINGLE_WRITER and/or
   * SINGLE_NODE_MULTI_WRITER access modes.
   * These access modes are intended to replace the
   * SINGLE_NODE_WRITER access mode to clarify the number of writers
   * for a volume on a single node. Plugins MUST accept and allow
   * use of the SINGLE_NODE_WRITER access mode (subject to the
   * processing rules for NodePublishVolume), when either
   * SINGLE_NODE_SINGLE_WRITER and/or SINGLE_NODE_MULTI_WRITER are
   * supported, in order to permit older COs to continue working.
   */
  SINGLE_NODE_MULTI_WRITER: 'SINGLE_NODE_MULTI_WRITER',
  /**
   * Indicates that Node service supports mounting volumes
   * with provided volume group identifier during node stage
   * or node publish RPC calls.
   */
  VOLUME_MOUNT_GROUP: 'VOLUME_MOUNT_GROUP',
} as const;

export type _csi_v1_NodeServiceCapability_RPC_Type =
  | 'UNKNOWN'
  | 0
  | 'STAGE_UNSTAGE_VOLUME'
  | 1
  /**
   * If Plugin implements GET_VOLUME_STATS capability
   * then it MUST implement NodeGetVolumeStats RPC
   * call for fetching volume statistics.
   */
  | 'GET_VOLUME_STATS'
  | 2
  /**
   * See VolumeExpansion for details.
   */
  | 'EXPAND_VOLUME'
  | 3
  /**
   * Indicates that the Node service can report volume conditions.
   * An SP MAY implement `VolumeCondition` in only the Node
   * Plugin, only the Controller Plugin, or both.
   * If `VolumeCondition` is implemented in both the Node and
   * Controller Plugins, it SHALL report from different
   * perspectives.
   * If for some reason Node and Controller Plugins report
   * misaligned volume conditions, CO SHALL assume the worst case
   * is the truth.
   * Note that, for alpha, `VolumeCondition` is intended to be
   * informative for humans only, not for automation.
   */
  | 'VOLUME_CONDITION'
  | 4
  /**
   * Indicates the SP supports the SINGLE_NODE_SINGLE_WRITER and/or
   * SINGLE_NODE_MULTI_WRITER access modes.
   * These access modes are intended to replace the
   * SINGLE_NODE_WRITER access mode to clarify the number of writers
   * for a volume on a single node. Plugins MUST accept and allow
   * use of the SINGLE_NODE_WRITER access mode (subject to the
   * processing rules for NodePublishVolume), when either
   * SINGLE_NODE_SINGLE_WRITER and/or SINGLE_NODE_MULTI_WRITER are
   * supported, in order to permit older COs to continue working.
   */
  | 'SINGLE_NODE_MULTI_WRITER'
  | 5
  /**
   * Indicates that Node service supports mounting volumes
   * with provided volume group identifier during node stage
   * or node publish RPC calls.
   */
  | 'VOLUME_MOUNT_GROUP'
  | 6

export type _csi_v1_NodeServiceCapability_RPC_Type__Output = typeof _csi_v1_NodeServiceCapability_RPC_Type[keyof typeof _csi_v1_NodeServiceCapability_RPC_Type]

/**
 * Specifies a capability of the node service.
 */
export interface NodeServiceCapability {
  /**
   * RPC that the controller supports.
   */
  'rpc'?: (_csi_v1_NodeServiceCapability_RPC | null);
  'type'?: "rpc";
}

/**
 * Specifies a capability of the node service.
 */
export interface NodeServiceCapability__Output {
  /**
   * RPC that the controller supports.
   */
  'rpc'?: (_csi_v1_NodeServiceCapability_RPC__Output | null);
  'type'?: "rpc";
}
