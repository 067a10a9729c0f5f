// Original file: proto/csi/v1/csi.proto


export interface ControllerGetVolumeRequest {
  /**
   * The ID of the volume to fetch current volume information for.
   * This field is REQUIRED.
   */
  'volume_id'?: (string);
}

export interface ControllerGetVolumeRequest__Output {
  /**
   * The ID of the volume to fetch current volume information for.
   * This field is REQUIRED.
   */
  'volume_id': (string);
}
