// Original file: proto/csi/v1/csi.proto

import type { VolumeCapability as _csi_v1_VolumeCapability, VolumeCapability__Output as _csi_v1_VolumeCapability__Output } from '../../csi/v1/VolumeCapability.ts';
import type { Topology as _csi_v1_Topology, Topology__Output as _csi_v1_Topology__Output } from '../../csi/v1/Topology.ts';

export interface GetCapacityRequest {
  /**
   * If specified, the Plugin SHALL report the capacity of the storage
   * that can be used to provision volumes that satisfy ALL of the
   * specified `volume_capabilities`. These are the same
   * `volume_capabilities` the CO will use in `CreateVolumeRequest`.
   * This field is OPTIONAL.
   */
  'volume_capabilities'?: (_csi_v1_VolumeCapability)[];
  /**
   * If specified, the Plugin SHALL report the capacity of the storage
   * that can be used to provision volumes with the given Plugin
   * specific `parameters`. These are the same `parameters` the CO will
   * use in `CreateVolumeRequest`. This field is OPTIONAL.
   */
  'parameters'?: ({[key: string]: string});
  /**
   * If specified, the Plugin SHALL report the capacity of the storage
   * that can be used to provision volumes that in the specified
   * `accessible_topology`. This is the same as the
   * `accessible_topology` the CO returns in a `CreateVolumeResponse`.
   * This field is OPTIONAL. This field SHALL NOT be set unless the
   * plugin advertises the VOLUME_ACCESSIBILITY_CONSTRAINTS capability.
   */
  'accessible_topology'?: (_csi_v1_Topology | null);
}

export interface GetCapacityRequest__Output {
  /**
   * If specified, the Plugin SHALL report the capacity of the storage
   * that can be used to provision volumes that satisfy ALL of the
   * specified `volume_capabilities`. These are the same
   * `volume_capabilities` the CO will use in `CreateVolumeRequest`.
   * This field is OPTIONAL.
   */
  'volume_capabilities': (_csi_v1_VolumeCapability__Output)[];
  /**
   * If specified, the Plugin SHALL report the capacity of the storage
   * that can be used to provision volumes with the given Plugin
   * specific `parameters`. These are the same `parameters` the CO will
   * use in `CreateVolumeRequest`. This field is OPTIONAL.
   */
  'parameters': ({[key: string]: string});
  /**
   * If specified, the Plugin SHALL report the capacity of the storage
   * that can be used to provision volumes that in the specified
   * `accessible_topology`. This is the same as the
   * `accessible_topology` the CO returns in a `CreateVolumeResponse`.
   * This field is OPTIONAL. This field SHALL NOT be set unless the
   * plugin advertises the VOLUME_ACCESSIBILITY_CONSTRAINTS capability.
   */
  'accessible_topology': (_csi_v1_Topology__Output | null);
}
