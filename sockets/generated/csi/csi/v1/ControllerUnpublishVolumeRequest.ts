// Original file: proto/csi/v1/csi.proto


export interface ControllerUnpublishVolumeRequest {
  /**
   * The ID of the volume. This field is REQUIRED.
   */
  'volume_id'?: (string);
  /**
   * The ID of the node. This field is OPTIONAL. The CO SHOULD set this
   * field to match the node ID returned by `NodeGetInfo` or leave it
   * unset. If the value is set, the SP MUST unpublish the volume from
   * the specified node. If the value is unset, the SP MUST unpublish
   * the volume from all nodes it is published to.
   */
  'node_id'?: (string);
  /**
   * Secrets required by plugin to complete controller unpublish volume
   * request. This SHOULD be the same secrets passed to the
   * ControllerPublishVolume call for the specified volume.
   * This field is OPTIONAL. Refer to the `Secrets Requirements`
   * section on how to use this field.
   */
  'secrets'?: ({[key: string]: string});
}

export interface ControllerUnpublishVolumeRequest__Output {
  /**
   * The ID of the volume. This field is REQUIRED.
   */
  'volume_id': (string);
  /**
   * The ID of the node. This field is OPTIONAL. The CO SHOULD set this
   * field to match the node ID returned by `NodeGetInfo` or leave it
   * unset. If the value is set, the SP MUST unpublish the volume from
   * the specified node. If the value is unset, the SP MUST unpublish
   * the volume from all nodes it is published to.
   */
  'node_id': (string);
  /**
   * Secrets required by plugin to complete controller unpublish volume
   * request. This SHOULD be the same secrets passed to the
   * ControllerPublishVolume call for the specified volume.
   * This field is OPTIONAL. Refer to the `Secrets Requirements`
   * section on how to use this field.
   */
  'secrets': ({[key: string]: string});
}
