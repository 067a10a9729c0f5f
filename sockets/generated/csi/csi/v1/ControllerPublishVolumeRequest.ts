// Original file: proto/csi/v1/csi.proto

import type { VolumeCapability as _csi_v1_VolumeCapability, VolumeCapability__Output as _csi_v1_VolumeCapability__Output } from '../../csi/v1/VolumeCapability.ts';

export interface ControllerPublishVolumeRequest {
  /**
   * The ID of the volume to be used on a node.
   * This field is REQUIRED.
   */
  'volume_id'?: (string);
  /**
   * The ID of the node. This field is REQUIRED. The CO SHALL set this
   * field to match the node ID returned by `NodeGetInfo`.
   */
  'node_id'?: (string);
  /**
   * Volume capability describing how the CO intends to use this volume.
   * SP MUST ensure the CO can use the published volume as described.
   * Otherwise SP MUST return the appropriate gRPC error code.
   * This is a REQUIRED field.
   */
  'volume_capability'?: (_csi_v1_VolumeCapability | null);
  /**
   * Indicates SP MUST publish the volume in readonly mode.
   * CO MUST set this field to false if SP does not have the
   * PUBLISH_READONLY controller capability.
   * This is a REQUIRED field.
   */
  'readonly'?: (boolean);
  /**
   * Secrets required by plugin to complete controller publish volume
   * request. This field is OPTIONAL. Refer to the
   * `Secrets Requirements` section on how to use this field.
   */
  'secrets'?: ({[key: string]: string});
  /**
   * Volume context as returned by SP in
   * CreateVolumeResponse.Volume.volume_context.
   * This field is OPTIONAL and MUST match the volume_context of the
   * volume identified by `volume_id`.
   */
  'volume_context'?: ({[key: string]: string});
}

export interface ControllerPublishVolumeRequest__Output {
  /**
   * The ID of the volume to be used on a node.
   * This field is REQUIRED.
   */
  'volume_id': (string);
  /**
   * The ID of the node. This field is REQUIRED. The CO SHALL set this
   * field to match the node ID returned by `NodeGetInfo`.
   */
  'node_id': (string);
  /**
   * Volume capability describing how the CO intends to use this volume.
   * SP MUST ensure the CO can use the published volume as described.
   * Otherwise SP MUST return the appropriate gRPC error code.
   * This is a REQUIRED field.
   */
  'volume_capability': (_csi_v1_VolumeCapability__Output | null);
  /**
   * Indicates SP MUST publish the volume in readonly mode.
   * CO MUST set this field to false if SP does not have the
   * PUBLISH_READONLY controller capability.
   * This is a REQUIRED field.
   */
  'readonly': (boolean);
  /**
   * Secrets required by plugin to complete controller publish volume
   * request. This field is OPTIONAL. Refer to the
   * `Secrets Requirements` section on how to use this field.
   */
  'secrets': ({[key: string]: string});
  /**
   * Volume context as returned by SP in
   * CreateVolumeResponse.Volume.volume_context.
   * This field is OPTIONAL and MUST match the volume_context of the
   * volume identified by `volume_id`.
   */
  'volume_context': ({[key: string]: string});
}
