/**
 * A container's resource limits as a provider receives them (`limits` of a
 * container start or of a resolved container): one conversion for both
 * provider kinds.
 */
import type { V1Container, V1Pod } from '@kubernetes/client-node';
import { milliCpu, quantityUnits as parseQuantity } from '../kube/index.ts';

/** `resources.limits` of `c`: memory in bytes, cpu in millicores; absent limits stay undefined. */
export function containerLimits(c: V1Container): { memoryBytes?: number; cpuMillis?: number } {
  const l = c.resources?.limits ?? {};
  return {
    memoryBytes: l.memory !== undefined ? parseQuantity(l.memory) : undefined,
    cpuMillis: l.cpu !== undefined ? milliCpu(l.cpu) : undefined,
  };
}

/** A pod's QoS class, as upstream computes it (`pkg/apis/core/helper/qos`). */
export type QosClass = 'Guaranteed' | 'Burstable' | 'BestEffort';

/**
 * `status.qosClass` of `pod` when the apiserver set it, else computed from the
 * cpu and memory requests and limits of its containers and init containers:
 * none anywhere → BestEffort; every container with cpu and memory limits and
 * requests equal to them (absent requests default to limits) → Guaranteed;
 * otherwise Burstable.
 */
export function podQosClass(pod: V1Pod): QosClass {
  const set = pod.status?.qosClass;
  if (set === 'Guaranteed' || set === 'Burstable' || set === 'BestEffort') return set;
  const all = [...(pod.spec?.initContainers ?? []), ...(pod.spec?.containers ?? [])];
  let any = false;
  let guaranteed = all.length > 0;
  for (const c of all) {
    const req = c.resources?.requests ?? {};
    const lim = c.resources?.limits ?? {};
    for (const r of ['cpu', 'memory'] as const) {
      if (req[r] !== undefined || lim[r] !== undefined) any = true;
      if (lim[r] === undefined) guaranteed = false;
      else if (req[r] !== undefined && amount(r, req[r]) !== amount(r, lim[r])) guaranteed = false;
    }
  }
  if (!any) return 'BestEffort';
  function amount(r: 'cpu' | 'memory', q: string): number {
    return r === 'cpu' ? milliCpu(q) : parseQuantity(q);
  }
  return guaranteed ? 'Guaranteed' : 'Burstable';
}
