// Original file: proto/csi/v1/csi.proto


/**
 * VolumeCondition represents the current condition of a volume.
 */
export interface VolumeCondition {
  /**
   * Normal volumes are available for use and operating optimally.
   * An abnormal volume does not meet these criteria.
   * This field is REQUIRED.
   */
  'abnormal'?: (boolean);
  /**
   * The message describing the condition of the volume.
   * This field is REQUIRED.
   */
  'message'?: (string);
}

/**
 * VolumeCondition represents the current condition of a volume.
 */
export interface VolumeCondition__Output {
  /**
   * Normal volumes are available for use and operating optimally.
   * An abnormal volume does not meet these criteria.
   * This field is REQUIRED.
   */
  'abnormal': (boolean);
  /**
   * The message describing the condition of the volume.
   * This field is REQUIRED.
   */
  'message': (string);
}
