// Original file: proto/csi/v1/csi.proto

import type { Int64Value as _google_protobuf_Int64Value, Int64Value__Output as _google_protobuf_Int64Value__Output } from '../../google/protobuf/Int64Value.ts';
import type { Long } from '@grpc/proto-loader';

export interface GetCapacityResponse {
  /**
   * The available capacity, in bytes, of the storage that can be used
   * to provision volumes. If `volume_capabilities` or `parameters` is
   * specified in the request, the Plugin SHALL take those into
   * consideration when calculating the available capacity of the
   * storage. This field is REQUIRED.
   * The value of this field MUST NOT be negative.
   */
  'available_capacity'?: (number | string | Long);
  /**
   * The largest size that may be used in a
   * CreateVolumeRequest.capacity_range.required_bytes field
   * to create a volume with the same parameters as those in
   * GetCapacityRequest.
   * 
   * If `volume_capabilities` or `parameters` is
   * specified in the request, the Plugin SHALL take those into
   * consideration when calculating the minimum volume size of the
   * storage.
   * 
   * This field is OPTIONAL. MUST NOT be negative.
   * The Plugin SHOULD provide a value for this field if it has
   * a maximum size for individual volumes and leave it unset
   * otherwise. COs MAY use it to make decision about
   * where to create volumes.
   */
  'maximum_volume_size'?: (_google_protobuf_Int64Value | null);
  /**
   * The smallest size that may be used in a
   * CreateVolumeRequest.capacity_range.limit_bytes field
   * to create a volume with the same parameters as those in
   * GetCapacityRequest.
   * 
   * If `volume_capabilities` or `parameters` is
   * specified in the request, the Plugin SHALL take those into
   * consideration when calculating the maximum volume size of the
   * storage.
   * 
   * This field is OPTIONAL. MUST NOT be negative.
   * The Plugin SHOULD provide a value for this field if it has
   * a minimum size for individual volumes and leave it unset
   * otherwise. COs MAY use it to make decision about
   * where to create volumes.
   */
  'minimum_volume_size'?: (_google_protobuf_Int64Value | null);
}

export interface GetCapacityResponse__Output {
  /**
   * The available capacity, in bytes, of the storage that can be used
   * to provision volumes. If `volume_capabilities` or `parameters` is
   * specified in the request, the Plugin SHALL take those into
   * consideration when calculating the available capacity of the
   * storage. This field is REQUIRED.
   * The value of this field MUST NOT be negative.
   */
  'available_capacity': (string);
  /**
   * The largest size that may be used in a
   * CreateVolumeRequest.capacity_range.required_bytes field
   * to create a volume with the same parameters as those in
   * GetCapacityRequest.
   * 
   * If `volume_capabilities` or `parameters` is
   * specified in the request, the Plugin SHALL take those into
   * consideration when calculating the minimum volume size of the
   * storage.
   * 
   * This field is OPTIONAL. MUST NOT be negative.
   * The Plugin SHOULD provide a value for this field if it has
   * a maximum size for individual volumes and leave it unset
   * otherwise. COs MAY use it to make decision about
   * where to create volumes.
   */
  'maximum_volume_size': (_google_protobuf_Int64Value__Output | null);
  /**
   * The smallest size that may be used in a
   * CreateVolumeRequest.capacity_range.limit_bytes field
   * to create a volume with the same parameters as those in
   * GetCapacityRequest.
   * 
   * If `volume_capabilities` or `parameters` is
   * specified in the request, the Plugin SHALL take those into
   * consideration when calculating the maximum volume size of the
   * storage.
   * 
   * This field is OPTIONAL. MUST NOT be negative.
   * The Plugin SHOULD provide a value for this field if it has
   * a minimum size for individual volumes and leave it unset
   * otherwise. COs MAY use it to make decision about
   * where to create volumes.
   */
  'minimum_volume_size': (_google_protobuf_Int64Value__Output | null);
}
