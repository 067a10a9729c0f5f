/**
 * Which pod changes need a sync. Like upstream's pod config, an update that only
 * changes the status (most often nodelet's own status patch, echoed back by the
 * watch) does not re-run the pod's sync; the stored pod is still replaced.
 */
import type { V1Container, V1Pod, V1PodCondition } from '@kubernetes/client-node';

/** The pod conditions nodelet computes and posts (pod-status.ts `podConditions`); upstream's `PodConditionsByKubelet`. */
const KUBELET_CONDITIONS = ['PodReadyToStartContainers', 'Initialized', 'ContainersReady', 'Ready'];

/**
 * The status of each kubelet-owned condition among `conditions`, as one string
 * (`PodReadyToStartContainers=True,Initialized=True,...`): what nodelet posted, to compare the
 * server's copy with.
 */
export function kubeletConditions(conditions?: readonly V1PodCondition[]): string {
  return KUBELET_CONDITIONS.map((t) => `${t}=${conditions?.find((c) => c.type === t)?.status ?? ''}`).join(',');
}

/**
 * The fields whose change is handed to `updatePod`: labels, annotations,
 * `activeDeadlineSeconds` and container images (the mutable parts of a pod).
 */
export function mutableFingerprint(pod: V1Pod): string {
  const images = (cs?: V1Container[]) => cs?.map((c) => [c.name, c.image ?? '']);
  return JSON.stringify([
    pod.metadata?.labels ?? {},
    pod.metadata?.annotations ?? {},
    pod.spec?.activeDeadlineSeconds ?? null,
    images(pod.spec?.initContainers) ?? [],
    images(pod.spec?.containers) ?? [],
  ]);
}

/**
 * True when `next` differs from `prev` in anything but status and bookkeeping metadata. A new
 * `metadata.generation` (any change of the spec, a resize among them) is synced, so that the
 * status reports the generation acted on (`status.observedGeneration`).
 */
export function needsSync(prev: V1Pod, next: V1Pod): boolean {
  const m = (p: V1Pod) => p.metadata ?? {};
  return (
    m(prev).uid !== m(next).uid ||
    (m(prev).generation ?? 0) !== (m(next).generation ?? 0) ||
    String(m(prev).deletionTimestamp ?? '') !== String(m(next).deletionTimestamp ?? '') ||
    m(prev).deletionGracePeriodSeconds !== m(next).deletionGracePeriodSeconds ||
    mutableFingerprint(prev) !== mutableFingerprint(next)
  );
}
