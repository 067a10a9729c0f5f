// Original file: proto/csi/v1/csi.proto


export interface ControllerPublishVolumeResponse {
  /**
   * Opaque static publish properties of the volume. SP MAY use this
   * field to ensure subsequent `NodeStageVolume` or `NodePublishVolume`
   * calls calls have contextual information.
   * The contents of this field SHALL be opaque to a CO.
   * The contents of this field SHALL NOT be mutable.
   * The contents of this field SHALL be safe for the CO to cache.
   * The contents of this field SHOULD NOT contain sensitive
   * information.
   * The contents of this field SHOULD NOT be used for uniquely
   * identifying a volume. The `volume_id` alone SHOULD be sufficient to
   * identify the volume.
   * This field is OPTIONAL and when present MUST be passed to
   * subsequent `NodeStageVolume` or `NodePublishVolume` calls
   */
  'publish_context'?: ({[key: string]: string});
}

export interface ControllerPublishVolumeResponse__Output {
  /**
   * Opaque static publish properties of the volume. SP MAY use this
   * field to ensure subsequent `NodeStageVolume` or `NodePublishVolume`
   * calls calls have contextual information.
   * The contents of this field SHALL be opaque to a CO.
   * The contents of this field SHALL NOT be mutable.
   * The contents of this field SHALL be safe for the CO to cache.
   * The contents of this field SHOULD NOT contain sensitive
   * information.
   * The contents of this field SHOULD NOT be used for uniquely
   * identifying a volume. The `volume_id` alone SHOULD be sufficient to
   * identify the volume.
   * This field is OPTIONAL and when present MUST be passed to
   * subsequent `NodeStageVolume` or `NodePublishVolume` calls
   */
  'publish_context': ({[key: string]: string});
}
