// Original file: proto/csi/v1/csi.proto

import type { BoolValue as _google_protobuf_BoolValue, BoolValue__Output as _google_protobuf_BoolValue__Output } from '../../google/protobuf/BoolValue.ts';

export interface ProbeResponse {
  /**
   * Readiness allows a plugin to report its initialization status back
   * to the CO. Initialization for some plugins MAY be time consuming
   * and it is important for a CO to distinguish between the following
   * cases:
   * 
   * 1) The plugin is in an unhealthy state and MAY need restarting. In
   * this case a gRPC error code SHALL be returned.
   * 2) The plugin is still initializing, but is otherwise perfectly
   * healthy. In this case a successful response SHALL be returned
   * with a readiness value of `false`. Calls to the plugin's
   * Controller and/or Node services MAY fail due to an incomplete
   * initialization state.
   * 3) The plugin has finished initializing and is ready to service
   * calls to its Controller and/or Node services. A successful
   * response is returned with a readiness value of `true`.
   * 
   * This field is OPTIONAL. If not present, the caller SHALL assume
   * that the plugin is in a ready state and is accepting calls to its
   * Controller and/or Node services (according to the plugin's reported
   * capabilities).
   */
  'ready'?: (_google_protobuf_BoolValue | null);
}

export interface ProbeResponse__Output {
  /**
   * Readiness allows a plugin to report its initialization status back
   * to the CO. Initialization for some plugins MAY be time consuming
   * and it is important for a CO to distinguish between the following
   * cases:
   * 
   * 1) The plugin is in an unhealthy state and MAY need restarting. In
   * this case a gRPC error code SHALL be returned.
   * 2) The plugin is still initializing, but is otherwise perfectly
   * healthy. In this case a successful response SHALL be returned
   * with a readiness value of `false`. Calls to the plugin's
   * Controller and/or Node services MAY fail due to an incomplete
   * initialization state.
   * 3) The plugin has finished initializing and is ready to service
   * calls to its Controller and/or Node services. A successful
   * response is returned with a readiness value of `true`.
   * 
   * This field is OPTIONAL. If not present, the caller SHALL assume
   * that the plugin is in a ready state and is accepting calls to its
   * Controller and/or Node services (according to the plugin's reported
   * capabilities).
   */
  'ready': (_google_protobuf_BoolValue__Output | null);
}
