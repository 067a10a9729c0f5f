// Original file: proto/csi/v1/csi.proto

import type { Long } from '@grpc/proto-loader';

/**
 * The capacity of the storage space in bytes. To specify an exact size,
 * `required_bytes` and `limit_bytes` SHALL be set to the same value. At
 * least one of the these fields MUST be specified.
 */
export interface CapacityRange {
  /**
   * Volume MUST be at least this big. This field is OPTIONAL.
   * A value of 0 is equal to an unspecified field value.
   * The value of this field MUST NOT be negative.
   */
  'required_bytes'?: (number | string | Long);
  /**
   * Volume MUST not be bigger than this. This field is OPTIONAL.
   * A value of 0 is equal to an unspecified field value.
   * The value of this field MUST NOT be negative.
   */
  'limit_bytes'?: (number | string | Long);
}

/**
 * The capacity of the storage space in bytes. To specify an exact size,
 * `required_bytes` and `limit_bytes` SHALL be set to the same value. At
 * least one of the these fields MUST be specified.
 */
export interface CapacityRange__Output {
  /**
   * Volume MUST be at least this big. This field is OPTIONAL.
   * A value of 0 is equal to an unspecified field value.
   * The value of this field MUST NOT be negative.
   */
  'required_bytes': (string);
  /**
   * Volume MUST not be bigger than this. This field is OPTIONAL.
   * A value of 0 is equal to an unspecified field value.
   * The value of this field MUST NOT be negative.
   */
  'limit_bytes': (string);
}
