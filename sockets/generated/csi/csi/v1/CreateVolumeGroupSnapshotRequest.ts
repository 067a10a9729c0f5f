// Original file: proto/csi/v1/csi.proto


export interface CreateVolumeGroupSnapshotRequest {
  /**
   * The suggested name for the group snapshot. This field is REQUIRED
   * for idempotency.
   * Any Unicode string that conforms to the length limit is allowed
   * except those containing the following banned characters:
   * U+0000-U+0008, U+000B, U+000C, U+000E-U+001F, U+007F-U+009F.
   * (These are control characters other than commonly used whitespace.)
   */
  'name'?: (string);
  /**
   * volume IDs of the source volumes to be snapshotted together.
   * This field is REQUIRED.
   */
  'source_volume_ids'?: (string)[];
  /**
   * Secrets required by plugin to complete
   * ControllerCreateVolumeGroupSnapshot request.
   * This field is OPTIONAL. Refer to the `Secrets Requirements`
   * section on how to use this field.
   * The secrets provided in this field SHOULD be the same for
   * all group snapshot operations on the same group snapshot.
   */
  'secrets'?: ({[key: string]: string});
  /**
   * Plugin specific parameters passed in as opaque key-value pairs.
   * This field is OPTIONAL. The Plugin is responsible for parsing and
   * validating these parameters. COs will treat these as opaque.
   */
  'parameters'?: ({[key: string]: string});
}

export interface CreateVolumeGroupSnapshotRequest__Output {
  /**
   * The suggested name for the group snapshot. This field is REQUIRED
   * for idempotency.
   * Any Unicode string that conforms to the length limit is allowed
   * except those containing the following banned characters:
   * U+0000-U+0008, U+000B, U+000C, U+000E-U+001F, U+007F-U+009F.
   * (These are control characters other than commonly used whitespace.)
   */
  'name': (string);
  /**
   * volume IDs of the source volumes to be snapshotted together.
   * This field is REQUIRED.
   */
  'source_volume_ids': (string)[];
  /**
   * Secrets required by plugin to complete
   * ControllerCreateVolumeGroupSnapshot request.
   * This field is OPTIONAL. Refer to the `Secrets Requirements`
   * section on how to use this field.
   * The secrets provided in this field SHOULD be the same for
   * all group snapshot operations on the same group snapshot.
   */
  'secrets': ({[key: string]: string});
  /**
   * Plugin specific parameters passed in as opaque key-value pairs.
   * This field is OPTIONAL. The Plugin is responsible for parsing and
   * validating these parameters. COs will treat these as opaque.
   */
  'parameters': ({[key: string]: string});
}
