// Original file: proto/csi/v1/csi.proto


export interface DeleteVolumeRequest {
  /**
   * The ID of the volume to be deprovisioned.
   * This field is REQUIRED.
   */
  'volume_id'?: (string);
  /**
   * Secrets required by plugin to complete volume deletion request.
   * This field is OPTIONAL. Refer to the `Secrets Requirements`
   * section on how to use this field.
   */
  'secrets'?: ({[key: string]: string});
}

export interface DeleteVolumeRequest__Output {
  /**
   * The ID of the volume to be deprovisioned.
   * This field is REQUIRED.
   */
  'volume_id': (string);
  /**
   * Secrets required by plugin to complete volume deletion request.
   * This field is OPTIONAL. Refer to the `Secrets Requirements`
   * section on how to use this field.
   */
  'secrets': ({[key: string]: string});
}
