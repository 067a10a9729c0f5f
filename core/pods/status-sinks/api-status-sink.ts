/**
 * The cluster mode's status sink: pod status is patched through the API server
 * (with the pod's uid as a precondition) and finished pods are deleted with grace 0.
 */
import type { V1Pod, V1PodStatus } from '@kubernetes/client-node';
import { apiMessage, isApiNotFound, strategicMergePatch, type KubeClients } from '../../kube/index.ts';
import { nodeletError } from '../../errors/index.ts';
import type { StatusSink } from '../pod-controller.ts';

/** Writes pod status and deletes finished pods through the API server. */
export function apiStatusSink(clients: KubeClients): StatusSink {
  return {
    async patchStatus(pod: V1Pod, status: V1PodStatus) {
      const body = { metadata: { uid: pod.metadata!.uid }, status };
      await clients.core.patchNamespacedPodStatus({ name: pod.metadata!.name!, namespace: pod.metadata!.namespace!, body }, strategicMergePatch);
    },
    async deletePod(pod: V1Pod) {
      try {
        await clients.core.deleteNamespacedPod({
          name: pod.metadata!.name!,
          namespace: pod.metadata!.namespace!,
          gracePeriodSeconds: 0,
          body: { gracePeriodSeconds: 0, preconditions: { uid: pod.metadata!.uid } },
        });
      } catch (e) {
        if (!isApiNotFound(e)) throw nodeletError('NDL_API_REQUEST', apiMessage(e), e);
      }
    },
  };
}
