// Original file: proto/csi/v1/csi.proto


/**
 * Specify how a volume can be accessed.
 */
export interface _csi_v1_VolumeCapability_AccessMode {
  /**
   * This field is REQUIRED.
   */
  'mode'?: (_csi_v1_VolumeCapability_AccessMode_Mode);
}

/**
 * Specify how a volume can be accessed.
 */
export interface _csi_v1_VolumeCapability_AccessMode__Output {
  /**
   * This field is REQUIRED.
   */
  'mode': (_csi_v1_VolumeCapability_AccessMode_Mode__Output);
}

/**
 * Indicate that the volume will be accessed via the block device API.
 */
export interface _csi_v1_VolumeCapability_BlockVolume {
}

/**
 * Indicate that the volume will be accessed via the block device API.
 */
export interface _csi_v1_VolumeCapability_BlockVolume__Output {
}

// Original file: proto/csi/v1/csi.proto

export const _csi_v1_VolumeCapability_AccessMode_Mode = {
  UNKNOWN: 'UNKNOWN',
  /**
   * Can only be published once as read/write on a single node, at
   * any given time.
   */
  SINGLE_NODE_WRITER: 'SINGLE_NODE_WRITER',
  /**
   * Can only be published once as readonly on a single node, at
   * any given time.
   */
  SINGLE_NODE_READER_ONLY: 'SINGLE_NODE_READER_ONLY',
  /**
   * Can be published as readonly at multiple nodes simultaneously.
   */
  MULTI_NODE_READER_ONLY: 'MULTI_NODE_READER_ONLY',
  /**
   * Can be published at multiple nodes simultaneously. Only one of
   * the node can be used as read/write. The rest will be readonly.
   */
  MULTI_NODE_SINGLE_WRITER: 'MULTI_NODE_SINGLE_WRITER',
  /**
   * Can be published as read/write at multiple nodes
   * simultaneously.
   */
  MULTI_NODE_MULTI_WRITER: 'MULTI_NODE_MULTI_WRITER',
  /**
   * Can only be published once as read/write at a single workload
   * on a single node, at any given time. SHOULD be used instead of
   * SINGLE_NODE_WRITER for COs using the experimental
   * SINGLE_NODE_MULTI_WRITER capability.
   */
  SINGLE_NODE_SINGLE_WRITER: 'SINGLE_NODE_SINGLE_WRITER',
  /**
   * Can be published as read/write at multiple workloads on a
   * single node simultaneously. SHOULD be used instead of
   * SINGLE_NODE_WRITER for COs using the experimental
   * SINGLE_NODE_MULTI_WRITER capability.
   */
  SINGLE_NODE_MULTI_WRITER: 'SINGLE_NODE_MULTI_WRITER',
} as const;

export type _csi_v1_VolumeCapability_AccessMode_Mode =
  | 'UNKNOWN'
  | 0
  /**
   * Can only be published once as read/write on a single node, at
   * any given time.
   */
  | 'SINGLE_NODE_WRITER'
  | 1
  /**
   * Can only be published once as readonly on a single node, at
   * any given time.
   */
  | 'SINGLE_NODE_READER_ONLY'
  | 2
  /**
   * Can be published as readonly at multiple nodes simultaneously.
   */
  | 'MULTI_NODE_READER_ONLY'
  | 3
  /**
   * Can be published at multiple nodes simultaneously. Only one of
   * the node can be used as read/write. The rest will be readonly.
   */
  | 'MULTI_NODE_SINGLE_WRITER'
  | 4
  /**
   * Can be published as read/write at multiple nodes
   * simultaneously.
   */
  | 'MULTI_NODE_MULTI_WRITER'
  | 5
  /**
   * Can only be published once as read/write at a single workload
   * on a single node, at any given time. SHOULD be used instead of
   * SINGLE_NODE_WRITER for COs using the experimental
   * SINGLE_NODE_MULTI_WRITER capability.
   */
  | 'SINGLE_NODE_SINGLE_WRITER'
  | 6
  /**
   * Can be published as read/write at multiple workloads on a
   * single node simultaneously. SHOULD be used instead of
   * SINGLE_NODE_WRITER for COs using the experimental
   * SINGLE_NODE_MULTI_WRITER capability.
   */
  | 'SINGLE_NODE_MULTI_WRITER'
  | 7

export type _csi_v1_VolumeCapability_AccessMode_Mode__Output = typeof _csi_v1_VolumeCapability_AccessMode_Mode[keyof typeof _csi_v1_VolumeCapability_AccessMode_Mode]

/**
 * Indicate that the volume will be accessed via the filesystem API.
 */
export interface _csi_v1_VolumeCapability_MountVolume {
  /**
   * The filesystem type. This field is OPTIONAL.
   * An empty string is equal to an unspecified field value.
   */
  'fs_type'?: (string);
  /**
   * The mount options that can be used for the volume. This field is
   * OPTIONAL. `mount_flags` MAY contain sensitive information.
   * Therefore, the CO and the Plugin MUST NOT leak this information
   * to untrusted entities. The total size of this repeated field
   * SHALL NOT exceed 4 KiB.
   */
  'mount_flags'?: (string)[];
  /**
   * If SP has VOLUME_MOUNT_GROUP node capability and CO provides
   * this field then SP MUST ensure that the volume_mount_group
   * parameter is passed as the group identifier to the underlying
   * operating system mount system call, with the understanding
   * that the set of available mount call parameters and/or
   * mount implementations may vary across operating systems.
   * Additionally, new file and/or directory entries written to
   * the underlying filesystem SHOULD be permission-labeled in such a
   * manner, unless otherwise modified by a workload, that they are
   * both readable and writable by said mount group identifier.
   * This is an OPTIONAL field.
   */
  'volume_mount_group'?: (string);
}

/**
 * Indicate that the volume will be accessed via the filesystem API.
 */
export interface _csi_v1_VolumeCapability_MountVolume__Output {
  /**
   * The filesystem type. This field is OPTIONAL.
   * An empty string is equal to an unspecified field value.
   */
  'fs_type': (string);
  /**
   * The mount options that can be used for the volume. This field is
   * OPTIONAL. `mount_flags` MAY contain sensitive information.
   * Therefore, the CO and the Plugin MUST NOT leak this information
   * to untrusted entities. The total size of this repeated field
   * SHALL NOT exceed 4 KiB.
   */
  'mount_flags': (string)[];
  /**
   * If SP has VOLUME_MOUNT_GROUP node capability and CO provides
   * this field then SP MUST ensure that the volume_mount_group
   * parameter is passed as the group identifier to the underlying
   * operating system mount system call, with the understanding
   * that the set of available mount call parameters and/or
   * mount implementations may vary across operating systems.
   * Additionally, new file and/or directory entries written to
   * the underlying filesystem SHOULD be permission-labeled in such a
   * manner, unless otherwise modified by a workload, that they are
   * both readable and writable by said mount group identifier.
   * This is an OPTIONAL field.
   */
  'volume_mount_group': (string);
}

/**
 * Specify a capability of a volume.
 */
export interface VolumeCapability {
  'block'?: (_csi_v1_VolumeCapability_BlockVolume | null);
  'mount'?: (_csi_v1_VolumeCapability_MountVolume | null);
  /**
   * This is a REQUIRED field.
   */
  'access_mode'?: (_csi_v1_VolumeCapability_AccessMode | null);
  /**
   * Specifies what API the volume will be accessed using. One of the
   * following fields MUST be specified.
   */
  'access_type'?: "block"|"mount";
}

/**
 * Specify a capability of a volume.
 */
export interface VolumeCapability__Output {
  'block'?: (_csi_v1_VolumeCapability_BlockVolume__Output | null);
  'mount'?: (_csi_v1_VolumeCapability_MountVolume__Output | null);
  /**
   * This is a REQUIRED field.
   */
  'access_mode': (_csi_v1_VolumeCapability_AccessMode__Output | null);
  /**
   * Specifies what API the volume will be accessed using. One of the
   * following fields MUST be specified.
   */
  'access_type'?: "block"|"mount";
}
