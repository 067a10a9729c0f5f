// Original file: proto/csi/v1/csi.proto


export interface NodeUnstageVolumeRequest {
  /**
   * The ID of the volume. This field is REQUIRED.
   */
  'volume_id'?: (string);
  /**
   * The path at which the volume was staged. It MUST be an absolute
   * path in the root filesystem of the process serving this request.
   * This is a REQUIRED field.
   * This field overrides the general CSI size limit.
   * SP SHOULD support the maximum path length allowed by the operating
   * system/filesystem, but, at a minimum, SP MUST accept a max path
   * length of at least 128 bytes.
   */
  'staging_target_path'?: (string);
}

export interface NodeUnstageVolumeRequest__Output {
  /**
   * The ID of the volume. This field is REQUIRED.
   */
  'volume_id': (string);
  /**
   * The path at which the volume was staged. It MUST be an absolute
   * path in the root filesystem of the process serving this request.
   * This is a REQUIRED field.
   * This field overrides the general CSI size limit.
   * SP SHOULD support the maximum path length allowed by the operating
   * system/filesystem, but, at a minimum, SP MUST accept a max path
   * length of at least 128 bytes.
   */
  'staging_target_path': (string);
}
