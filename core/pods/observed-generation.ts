/**
 * `status.observedGeneration` and the `observedGeneration` of the pod conditions nodelet owns
 * (PodObservedGenerationTracking, GA in 1.35): the `metadata.generation` of the pod object
 * the status was computed from, as upstream's status manager (`SetPodStatus`:
 * `CalculatePodStatusObservedGeneration`) and status generators
 * (`CalculatePodConditionObservedGeneration`) set them. A status never lowers what the
 * server's copy already shows (upstream keeps the larger one: a status computed from an older
 * copy of the pod is not a step back). Like upstream's `generateAPIPodStatus`, a pod that runs
 * here also gets `PodScheduled=True` when its status has no such condition (a pod bound without
 * the scheduler).
 */
import type { V1Pod, V1PodCondition, V1PodStatus } from '@kubernetes/client-node';
import type { PodStatusContributor } from './pod-status-contributor.ts';

/** The conditions whose observedGeneration nodelet sets (upstream's kubelet-owned readiness conditions and PodScheduled). */
const TRACKED = new Set(['PodReadyToStartContainers', 'Initialized', 'ContainersReady', 'Ready', 'PodScheduled']);

/** Sets the observed generation of `status` from `pod` (see the file's comment). */
export function withObservedGeneration(pod: V1Pod, status: V1PodStatus): V1PodStatus {
  const generation = Math.max(pod.metadata?.generation ?? 0, pod.status?.observedGeneration ?? 0);
  if (generation === 0) return status;
  const conditions = status.conditions?.map((c): V1PodCondition => (TRACKED.has(c.type) ? { ...c, observedGeneration: generation } : c));
  if (conditions?.some((c) => c.type === 'Ready') && !conditions.some((c) => c.type === 'PodScheduled')) {
    conditions.push({
      type: 'PodScheduled',
      status: 'True',
      lastProbeTime: null as unknown as undefined,
      lastTransitionTime: new Date(),
      observedGeneration: generation,
    });
  }
  return { ...status, observedGeneration: generation, ...(conditions ? { conditions } : {}) };
}

/** {@link withObservedGeneration} as a status contributor (the composition root puts it first). */
export const observedGenerationContributor: PodStatusContributor = { name: 'observed-generation', contribute: withObservedGeneration };
