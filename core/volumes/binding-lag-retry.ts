/**
 * Retries a request that the apiserver refused only because its own caches have not
 * yet seen the pod bound to this node.
 *
 * nodelet learns of a bound pod from its watch. Two checks in the apiserver read the
 * pod from informers of their own, which can be a few milliseconds behind that watch:
 *  - the NodeRestriction admission plugin, for a TokenRequest bound to the pod: a pod
 *    its lister has not seen is `pod "<name>" not found` (404), and one it has seen
 *    before the binding is 403 `node requested token bound to a pod scheduled on a
 *    different node` (plugin/pkg/admission/noderestriction/admission.go);
 *  - the Node authorizer, for the pod's ConfigMaps, Secrets and service account: 403
 *    `no relationship found between node '<node>' and this object` until its graph has
 *    the pod's edges (plugin/pkg/auth/authorizer/node/node_authorizer.go).
 *
 * In a 100-pod burst the bench saw up to 12 TokenRequests refused so, all for the first
 * pods of the burst. Upstream's kubelet fails the mount (`FailedMount … failed to
 * fetch token`, a known transient) and retries after its volume back-off (500 ms),
 * so the pods that were bound first started last.
 *
 * Here the same request is asked again after short waits (20 ms, doubling, five times:
 * 620 ms in all, like the first list of `api-object-watch.ts`, which waits for the
 * same lag), and only then is the refusal the caller's error (FailedMount, then the
 * volume back-off). Any other answer is returned at once.
 *
 *     ask ─► refused for binding lag ─► wait 20·2ⁿ ms (n < 5) ─► ask
 *      │                                  └─ n = 5: the refusal is the error
 *      └─► anything else: the answer (or error) as it is
 */
import { apiMessage, apiStatus } from '../kube/index.ts';

/** The first wait after a refusal for binding lag, in ms; doubled per refusal (here and in `api-object-watch.ts`). */
export const BINDING_LAG_FIRST_RETRY_MS = 20;
/** The waits between asks, in ms: 20, 40, 80, 160, 320. */
export const BINDING_LAG_RETRY_MS: readonly number[] = [1, 2, 4, 8, 16].map((k) => k * BINDING_LAG_FIRST_RETRY_MS);

const LAG_403 = ['no relationship found between node', 'node requested token bound to a pod scheduled on a different node'];
const POD_NOT_FOUND = /^pods? "[^"]+" not found$/;

/** True for a refusal that comes from the apiserver's caches lagging a pod's binding (see the file's header). */
export function isBindingLag(e: unknown): boolean {
  const status = apiStatus(e);
  if (status === 403) {
    const message = apiMessage(e);
    return LAG_403.some((m) => message.includes(m));
  }
  return status === 404 && POD_NOT_FOUND.test(apiMessage(e));
}

/** Runs `ask`, asking again after each of `waitsMs` while it fails with {@link isBindingLag}. */
export async function retryBindingLag<T>(
  ask: () => Promise<T>,
  waitsMs: readonly number[] = BINDING_LAG_RETRY_MS,
  sleep: (ms: number) => Promise<void> = (ms) => new Promise((r) => setTimeout(r, ms)),
): Promise<T> {
  for (let i = 0; ; i++) {
    try {
      return await ask();
    } catch (e) {
      if (i >= waitsMs.length || !isBindingLag(e)) throw e;
      await sleep(waitsMs[i]!);
    }
  }
}
