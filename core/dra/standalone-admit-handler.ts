/**
 * DRA in standalone mode: refused clearly. A ResourceClaim is allocated by
 * the scheduler and reserved for a pod in the API; standalone nodelet has
 * neither (no API server, no scheduler), so nothing could ever be prepared
 * and the pod would wait forever. Instead it is rejected at admission, as
 * upstream rejects a pod spec its node cannot run: phase `Failed`, reason
 * `UnsupportedPodSpec`, a `Warning` event with the same text.
 */
import type { V1Pod } from '@kubernetes/client-node';
import type { PodAdmitHandler } from '../pods/index.ts';

/** The rejection reason (as `pod-provider-driver.ts` uses for a spec the provider cannot run). */
export const UNSUPPORTED_POD_SPEC = 'UnsupportedPodSpec';

/** The admission message for a pod with `spec.resourceClaims` on a standalone node. */
export function standaloneDraMessage(pod: V1Pod): string {
  const names = (pod.spec?.resourceClaims ?? []).map((c) => c.name).join(', ');
  return (
    `pod uses ResourceClaims (${names}): Dynamic Resource Allocation needs cluster mode ` +
    `(the scheduler allocates claims through the API server), and this node runs standalone`
  );
}

/** Rejects pods with `spec.resourceClaims` (wired only when nodelet runs without an API server). */
export function standaloneDraAdmitHandler(): PodAdmitHandler {
  return {
    name: 'dra-standalone',
    admit(pod) {
      if (!pod.spec?.resourceClaims?.length) return { admit: true };
      return { admit: false, reason: UNSUPPORTED_POD_SPEC, message: standaloneDraMessage(pod) };
    },
  };
}
