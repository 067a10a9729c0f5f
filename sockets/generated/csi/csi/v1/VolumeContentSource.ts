// Original file: proto/csi/v1/csi.proto


export interface _csi_v1_VolumeContentSource_SnapshotSource {
  /**
   * Contains identity information for the existing source snapshot.
   * This field is REQUIRED. Plugin is REQUIRED to support creating
   * volume from snapshot if it supports the capability
   * CREATE_DELETE_SNAPSHOT.
   */
  'snapshot_id'?: (string);
}

export interface _csi_v1_VolumeContentSource_SnapshotSource__Output {
  /**
   * Contains identity information for the existing source snapshot.
   * This field is REQUIRED. Plugin is REQUIRED to support creating
   * volume from snapshot if it supports the capability
   * CREATE_DELETE_SNAPSHOT.
   */
  'snapshot_id': (string);
}

export interface _csi_v1_VolumeContentSource_VolumeSource {
  /**
   * Contains identity information for the existing source volume.
   * This field is REQUIRED. Plugins reporting CLONE_VOLUME
   * capability MUST support creating a volume from another volume.
   */
  'volume_id'?: (string);
}

export interface _csi_v1_VolumeContentSource_VolumeSource__Output {
  /**
   * Contains identity information for the existing source volume.
   * This field is REQUIRED. Plugins reporting CLONE_VOLUME
   * capability MUST support creating a volume from another volume.
   */
  'volume_id': (string);
}

/**
 * Specifies what source the volume will be created from. One of the
 * type fields MUST be specified.
 */
export interface VolumeContentSource {
  'snapshot'?: (_csi_v1_VolumeContentSource_SnapshotSource | null);
  'volume'?: (_csi_v1_VolumeContentSource_VolumeSource | null);
  'type'?: "snapshot"|"volume";
}

/**
 * Specifies what source the volume will be created from. One of the
 * type fields MUST be specified.
 */
export interface VolumeContentSource__Output {
  'snapshot'?: (_csi_v1_VolumeContentSource_SnapshotSource__Output | null);
  'volume'?: (_csi_v1_VolumeContentSource_VolumeSource__Output | null);
  'type'?: "snapshot"|"volume";
}
