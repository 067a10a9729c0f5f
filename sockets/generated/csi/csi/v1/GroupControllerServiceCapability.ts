// Original file: proto/csi/v1/csi.proto


export interface _csi_v1_GroupControllerServiceCapability_RPC {
  'type'?: (_csi_v1_GroupControllerServiceCapability_RPC_Type);
}

export interface _csi_v1_GroupControllerServiceCapability_RPC__Output {
  'type': (_csi_v1_GroupControllerServiceCapability_RPC_Type__Output);
}

// Original file: proto/csi/v1/csi.proto

export const _csi_v1_GroupControllerServiceCapability_RPC_Type = {
  UNKNOWN: 'UNKNOWN',
  /**
   * Indicates that the group controller plugin supports
   * creating, deleting, and getting details of a volume
   * group snapshot.
   */
  CREATE_DELETE_GET_VOLUME_GROUP_SNAPSHOT: 'CREATE_DELETE_GET_VOLUME_GROUP_SNAPSHOT',
} as const;

export type _csi_v1_GroupControllerServiceCapability_RPC_Type =
  | 'UNKNOWN'
  | 0
  /**
   * Indicates that the group controller plugin supports
   * creating, deleting, and getting details of a volume
   * group snapshot.
   */
  | 'CREATE_DELETE_GET_VOLUME_GROUP_SNAPSHOT'
  | 1

export type _csi_v1_GroupControllerServiceCapability_RPC_Type__Output = typeof _csi_v1_GroupControllerServiceCapability_RPC_Type[keyof typeof _csi_v1_GroupControllerServiceCapability_RPC_Type]

/**
 * Specifies a capability of the group controller service.
 */
export interface GroupControllerServiceCapability {
  /**
   * RPC that the controller supports.
   */
  'rpc'?: (_csi_v1_GroupControllerServiceCapability_RPC | null);
  'type'?: "rpc";
}

/**
 * Specifies a capability of the group controller service.
 */
export interface GroupControllerServiceCapability__Output {
  /**
   * RPC that the controller supports.
   */
  'rpc'?: (_csi_v1_GroupControllerServiceCapability_RPC__Output | null);
  'type'?: "rpc";
}
