// Original file: proto/podresources/v1/api.proto

import type { ClaimResource as _v1_ClaimResource, ClaimResource__Output as _v1_ClaimResource__Output } from '../v1/ClaimResource.ts';

/**
 * DynamicResource contains information about the devices assigned to a container by DRA
 */
export interface DynamicResource {
  /**
   * tombstone: removed in 1.31 because claims are no longer associated with one class
   * string class_name = 1;
   */
  'claim_name'?: (string);
  'claim_namespace'?: (string);
  'claim_resources'?: (_v1_ClaimResource)[];
}

/**
 * DynamicResource contains information about the devices assigned to a container by DRA
 */
export interface DynamicResource__Output {
  /**
   * tombstone: removed in 1.31 because claims are no longer associated with one class
   * string class_name = 1;
   */
  'claim_name': (string);
  'claim_namespace': (string);
  'claim_resources': (_v1_ClaimResource__Output)[];
}
