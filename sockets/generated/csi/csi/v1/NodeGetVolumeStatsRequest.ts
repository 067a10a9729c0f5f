// Original file: proto/csi/v1/csi.proto


export interface NodeGetVolumeStatsRequest {
  /**
   * The ID of the volume. This field is REQUIRED.
   */
  'volume_id'?: (string);
  /**
   * It can be any valid path where volume was previously
   * staged or published.
   * It MUST be an absolute path in the root filesystem of
   * the process serving this request.
   * This is a REQUIRED field.
   * This field overrides the general CSI size limit.
   * SP SHOULD support the maximum path length allowed by the operating
   * system/filesystem, but, at a minimum, SP MUST accept a max path
   * length of at least 128 bytes.
   */
  'volume_path'?: (string);
  /**
   * The path where the volume is staged, if the plugin has the
   * STAGE_UNSTAGE_VOLUME capability, otherwise empty.
   * If not empty, it MUST be an absolute path in the root
   * filesystem of the process serving this request.
   * This field is OPTIONAL.
   * This field overrides the general CSI size limit.
   * SP SHOULD support the maximum path length allowed by the operating
   * system/filesystem, but, at a minimum, SP MUST accept a max path
   * length of at least 128 bytes.
   */
  'staging_target_path'?: (string);
}

export interface NodeGetVolumeStatsRequest__Output {
  /**
   * The ID of the volume. This field is REQUIRED.
   */
  'volume_id': (string);
  /**
   * It can be any valid path where volume was previously
   * staged or published.
   * It MUST be an absolute path in the root filesystem of
   * the process serving this request.
   * This is a REQUIRED field.
   * This field overrides the general CSI size limit.
   * SP SHOULD support the maximum path length allowed by the operating
   * system/filesystem, but, at a minimum, SP MUST accept a max path
   * length of at least 128 bytes.
   */
  'volume_path': (string);
  /**
   * The path where the volume is staged, if the plugin has the
   * STAGE_UNSTAGE_VOLUME capability, otherwise empty.
   * If not empty, it MUST be an absolute path in the root
   * filesystem of the process serving this request.
   * This field is OPTIONAL.
   * This field overrides the general CSI size limit.
   * SP SHOULD support the maximum path length allowed by the operating
   * system/filesystem, but, at a minimum, SP MUST accept a max path
   * length of at least 128 bytes.
   */
  'staging_target_path': (string);
}
