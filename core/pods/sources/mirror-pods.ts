/**
 * Mirror pods: with a kubeconfig, each static pod gets a mirror Pod object in
 * the apiserver (upstream pkg/kubelet/pod/mirror_client.go): same spec, the
 * annotation `kubernetes.io/config.mirror: <config hash>`, and an owner
 * reference to the Node (NodeRestriction requires it). The static pod's status
 * is posted to its mirror (`../status-sinks/mirror-aware-sink.ts`); the informer
 * ignores mirrors (they are not run twice).
 */
import type { V1Pod } from '@kubernetes/client-node';
import type { Logger } from '@nodelet/plugin-api/v1';
import { apiMessage, isApiConflict, isApiNotFound, type KubeClients } from '../../kube/index.ts';

const MIRROR = 'kubernetes.io/config.mirror';
const HASH = 'kubernetes.io/config.hash';
const SOURCE = 'kubernetes.io/config.source';

/** True for a mirror pod (an API object that reflects a static pod). */
export const isMirrorPod = (p: V1Pod): boolean => p.metadata?.annotations?.[MIRROR] !== undefined;
/** True for a static pod (from a manifest file). */
export const isStaticPod = (p: V1Pod): boolean => p.metadata?.annotations?.[SOURCE] === 'file';

function mirrorOf(pod: V1Pod, node: { name: string; uid: string }): V1Pod {
  const m = pod.metadata!;
  const annotations = { ...m.annotations, [MIRROR]: m.annotations?.[HASH] ?? '' };
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: m.name,
      namespace: m.namespace,
      labels: m.labels,
      annotations,
      ownerReferences: [{ apiVersion: 'v1', kind: 'Node', name: node.name, uid: node.uid, controller: true }],
    },
    spec: pod.spec,
  };
}

/**
 * Creates the mirror pod for `pod`; if one exists already (from an earlier run, maybe with an
 * older spec) it is replaced. Nodes may not GET pods that are not theirs yet, so this creates
 * first and deals with the conflict. Failures are logged; static pods run regardless.
 */
export async function ensureMirrorPod(clients: KubeClients, pod: V1Pod, node: { name: string; uid: string }, log: Logger): Promise<void> {
  const { name, namespace } = pod.metadata as { name: string; namespace: string };
  const create = () => clients.core.createNamespacedPod({ namespace, body: mirrorOf(pod, node) });
  try {
    await create().catch(async (e) => {
      if (!isApiConflict(e)) throw e;
      await clients.core.deleteNamespacedPod({ name, namespace, gracePeriodSeconds: 0 }).catch((d) => {
        if (!isApiNotFound(d)) throw d;
      });
      await create();
    });
    log.info({ pod: `${namespace}/${name}` }, 'created mirror pod');
  } catch (e) {
    log.warn({ pod: `${namespace}/${name}`, err: apiMessage(e) }, 'failed to create mirror pod');
  }
}

/** Deletes the mirror pod of a static pod whose manifest is gone (upstream's `DeleteMirrorPod`); failures are logged. */
export async function deleteMirrorPod(clients: KubeClients, pod: V1Pod, log: Logger): Promise<void> {
  const { name, namespace } = pod.metadata as { name: string; namespace: string };
  try {
    await clients.core.deleteNamespacedPod({ name, namespace, gracePeriodSeconds: 0 });
    log.info({ pod: `${namespace}/${name}` }, 'deleted mirror pod');
  } catch (e) {
    if (!isApiNotFound(e)) log.warn({ pod: `${namespace}/${name}`, err: apiMessage(e) }, 'failed to delete mirror pod');
  }
}
