/**
 * Wraps a status sink for static pods: their status goes to their mirror pods
 * (upstream posts a static pod's status to its mirror), and they are never
 * deleted through the API; every other pod goes to the inner sink.
 */
import type { V1Pod, V1PodStatus } from '@kubernetes/client-node';
import { isApiNotFound, strategicMergePatch, type KubeClients } from '../../kube/index.ts';
import type { StatusSink } from '../pod-controller.ts';
import { isStaticPod } from '../sources/mirror-pods.ts';

/** Routes static pods' status to their mirror pods and everything else to `inner`. */
export function mirrorAwareSink(clients: KubeClients, inner: StatusSink): StatusSink {
  return {
    async patchStatus(pod: V1Pod, status: V1PodStatus) {
      if (!isStaticPod(pod)) return inner.patchStatus(pod, status);
      try {
        await clients.core.patchNamespacedPodStatus({ name: pod.metadata!.name!, namespace: pod.metadata!.namespace!, body: { status } }, strategicMergePatch);
      } catch (e) {
        if (!isApiNotFound(e)) throw e;
      }
    },
    deletePod: (pod) => (isStaticPod(pod) ? Promise.resolve() : inner.deletePod(pod)),
  };
}
