/**
 * `GET /pods`: the pods bound to this node as a v1 `PodList`, in wire format.
 * client-node models hold `Date`s; Kubernetes `Time` fields are RFC 3339 with
 * whole seconds (`2024-01-01T00:00:00Z`), so dates are printed that way.
 */
import type { V1Pod } from '@kubernetes/client-node';

/** The JSON text of a `PodList` holding `pods`. */
export function podListJson(pods: readonly V1Pod[]): string {
  return JSON.stringify({ kind: 'PodList', apiVersion: 'v1', metadata: {}, items: pods }, function (this: Record<string, unknown>, key, value) {
    const raw = this[key];
    return raw instanceof Date ? raw.toISOString().replace(/\.\d{3}Z$/, 'Z') : value;
  });
}
