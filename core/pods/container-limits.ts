/**
 * A container's resource limits as a provider receives them (`limits` of a
 * container start or of a resolved container): one conversion for both
 * provider kinds.
 */
import type { V1Container } from '@kubernetes/client-node';
import { milliCpu, quantityUnits as parseQuantity } from '../kube/index.ts';

/** `resources.limits` of `c`: memory in bytes, cpu in millicores; absent limits stay undefined. */
export function containerLimits(c: V1Container): { memoryBytes?: number; cpuMillis?: number } {
  const l = c.resources?.limits ?? {};
  return {
    memoryBytes: l.memory !== undefined ? parseQuantity(l.memory) : undefined,
    cpuMillis: l.cpu !== undefined ? milliCpu(l.cpu) : undefined,
  };
}
