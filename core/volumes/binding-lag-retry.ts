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
 * so the pods that were bound first started last. The lag grows with the apiserver's
 * load: in a 50-node burst on two cores ~100 of 1,000 pods were still refused after
 * 620 ms, some after 1.7 s.
 *
 * Here the same request is asked again after short waits, 20 ms doubling to at most
 * 640 ms, for up to 5.1 s in all (13 asks; the first six within 620 ms), and only
 * then is the refusal the caller's error (FailedMount, then the volume back-off). The
 * waits stop doubling at 640 ms so that a pod is never kept much past the lag, and go
 * on for seconds so that a loaded apiserver's lag ends in a token, not in a warning
 * event and a second round of asks. Any other answer is returned at once.
 *
 *     ask ─► refused for binding lag ─► wait min(20·2ⁿ, 640) ms (n < 12) ─► ask
 *      │                                  └─ n = 12: the refusal is the error
 *      └─► anything else: the answer (or error) as it is
 */
import { apiMessage, apiStatus } from '../kube/index.ts';

/** The first wait after a refusal for binding lag, in ms; doubled per refusal (here and in `api-object-watch.ts`). */
export const BINDING_LAG_FIRST_RETRY_MS = 20;
/** The longest wait between two asks, in ms. */
const BINDING_LAG_MAX_WAIT_MS = 640;
/** The waits between asks, in ms: 20, 40, 80, 160, 320, then 640 seven times (5.1 s in all). */
export const BINDING_LAG_RETRY_MS: readonly number[] = Array.from({ length: 12 }, (_, n) =>
  Math.min(BINDING_LAG_FIRST_RETRY_MS * 2 ** n, BINDING_LAG_MAX_WAIT_MS),
);

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
