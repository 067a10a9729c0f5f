/**
 * Pods bound to this node, from an informer on `spec.nodeName=<node>`
 * (the status sink that writes back is `../status-sinks/api-status-sink.ts`).
 */
import type { V1Pod } from '@kubernetes/client-node';
import type { Logger } from '@nodelet/plugin-api/v1';
import { ListWatch, type KubeClients } from '../../kube/index.ts';
import { isMirrorPod } from './mirror-pods.ts';

/** Receives pod changes. */
export interface PodHandler {
  upsert(pod: V1Pod): void;
  remove(key: string): void;
}

/** Starts an informer feeding `handler`; resolves after the first list, with the listed pods. */
export async function startApiPodSource(clients: KubeClients, nodeName: string, handler: PodHandler, log: Logger): Promise<{ stop(): void; pods: V1Pod[] }> {
  const fieldSelector = `spec.nodeName=${nodeName}`;
  const listFn = () => clients.core.listPodForAllNamespaces({ fieldSelector });
  const informer = new ListWatch<V1Pod>(clients.transport, '/api/v1/pods', listFn, { fieldSelector });
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
