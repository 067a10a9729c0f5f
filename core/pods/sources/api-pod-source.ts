/**
 * Pods bound to this node, from an informer on `spec.nodeName=<node>`, and
 * the status sink that writes back to the API server.
 */
import * as k8s from '@kubernetes/client-node';
import type { V1Pod, V1PodStatus } from '@kubernetes/client-node';
import type { Logger } from '@nodelet/plugin-api/v1';
import { apiMessage, isApiNotFound, strategicMergePatch, type KubeClients } from '../../kube/index.ts';
import type { StatusSink } from '../pod-controller.ts';
import { isMirrorPod } from './mirror-pods.ts';
import { nodeletError } from '../../errors/index.ts';

/** Receives pod changes. */
export interface PodHandler {
  upsert(pod: V1Pod): void;
  remove(key: string): void;
}

/** Starts an informer feeding `handler`; resolves after the first list, with the listed pods. */
export async function startApiPodSource(clients: KubeClients, nodeName: string, handler: PodHandler, log: Logger): Promise<{ stop(): void; pods: V1Pod[] }> {
  const fieldSelector = `spec.nodeName=${nodeName}`;
  const listFn = () => clients.core.listPodForAllNamespaces({ fieldSelector });
  const informer = new k8s.ListWatch<V1Pod>('/api/v1/pods', new k8s.Watch(clients.kc), listFn, false, undefined, fieldSelector);
  const key = (p: V1Pod) => `${p.metadata!.namespace}/${p.metadata!.name}`;
  // Mirror pods reflect static pods that already run from their manifests.
  informer.on('add', (p) => {
    if (!isMirrorPod(p)) handler.upsert(p);
  });
  informer.on('update', (p) => {
    if (!isMirrorPod(p)) handler.upsert(p);
  });
  informer.on('delete', (p) => {
    if (!isMirrorPod(p)) handler.remove(key(p));
  });
  let stopped = false;
  informer.on('error', (e) => {
    if (stopped) return;
    log.warn({ err: String(e) }, 'pod watch failed, restarting in 1s');
    setTimeout(() => {
      if (!stopped) void informer.start().catch(() => undefined);
    }, 1000);
  });
  await informer.start();
  return {
    stop: () => {
      stopped = true;
      void informer.stop();
    },
    pods: [...informer.list()],
  };
}

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
