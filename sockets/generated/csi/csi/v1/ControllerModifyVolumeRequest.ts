// Original file: proto/csi/v1/csi.proto


export interface ControllerModifyVolumeRequest {
  /**
   * Contains identity information for the existing volume.
   * This field is REQUIRED.
   */
  'volume_id'?: (string);
  /**
   * Secrets required by plugin to complete modify volume request.
   * This field is OPTIONAL. Refer to the `Secrets Requirements`
   * section on how to use this field.
   */
  'secrets'?: ({[key: string]: string});
  /**
   * Plugin specific volume attributes to mutate, passed in as
   * opaque key-value pairs.
   * This field is REQUIRED. The Plugin is responsible for
   * parsing and validating these parameters. COs will treat these
   * as opaque. The CO SHOULD specify the intended values of all mutable
   * parameters it intends to modify. SPs MUST NOT modify volumes based
   * on the absence of keys, only keys that are specified should result
   * in modifications to the volume.
   */
  'mutable_parameters'?: ({[key: string]: string});
}

export interface ControllerModifyVolumeRequest__Output {
  /**
   * Contains identity information for the existing volume.
   * This field is REQUIRED.
   */
  'volume_id': (string);
  /**
   * Secrets required by plugin to complete modify volume request.
   * This field is OPTIONAL. Refer to the `Secrets Requirements`
   * section on how to use this field.
   */
  'secrets': ({[key: string]: string});
  /**
   * Plugin specific volume attributes to mutate, passed in as
   * opaque key-value pairs.
   * This field is REQUIRED. The Plugin is responsible for
   * parsing and validating these parameters. COs will treat these
   * as opaque. The CO SHOULD specify the intended values of all mutable
   * parameters it intends to modify. SPs MUST NOT modify volumes based
   * on the absence of keys, only keys that are specified should result
   * in modifications to the volume.
   */
  'mutable_parameters': ({[key: string]: string});
}
