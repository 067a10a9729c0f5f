/**
 * Downward API `resourceFieldRef` values (upstream
 * `resource.ExtractContainerResourceValue` with the kubelet's defaulting of
 * missing limits to node allocatable).
 */
import { nodeletError } from '../../errors/index.ts';
import type { V1Container, V1Pod, V1ResourceFieldSelector } from '@kubernetes/client-node';
import { ceilDiv, parseQuantity, quantityMilliValue, quantityValue, type Quantity } from '../../kube/index.ts';

const DEFAULTED_LIMITS = ['cpu', 'memory', 'ephemeral-storage'];

/** The container named `name` among the pod's containers, then its init containers. */
export function findContainer(pod: V1Pod, name: string): V1Container {
  const c = [...(pod.spec?.containers ?? []), ...(pod.spec?.initContainers ?? [])].find((x) => x.name === name);
  if (!c) throw nodeletError('NDL_DOWNWARD_API', `container ${name} not found`);
  return c;
}

function qty(values: Record<string, string> | undefined, name: string): Quantity {
  const v = values?.[name];
  return v === undefined ? { num: 0n, den: 1n } : parseQuantity(v);
}

/** Limits with missing cpu/memory/ephemeral-storage/hugepages taken from node allocatable. */
function limitsWithAllocatable(container: V1Container, allocatable: Readonly<Record<string, string>>): Record<string, string> {
  const limits: Record<string, string> = { ...(container.resources?.limits ?? {}) };
  for (const [k, v] of Object.entries(allocatable)) {
    if ((DEFAULTED_LIMITS.includes(k) || k.startsWith('hugepages-')) && limits[k] === undefined) limits[k] = v;
  }
  return limits;
}

/**
 * The value for `ref` as upstream formats it: cpu in units of the divisor
 * (millicores compared, rounded up), memory/storage/hugepages in bytes per
 * divisor, rounded up. `container` is used when `ref.containerName` is empty.
 */
export function resourceFieldValue(
  pod: V1Pod,
  container: V1Container | undefined,
  ref: V1ResourceFieldSelector,
  allocatable: Readonly<Record<string, string>>,
): string {
  const c = ref.containerName ? findContainer(pod, ref.containerName) : container;
  if (!c) throw nodeletError('NDL_DOWNWARD_API', 'resourceFieldRef: containerName is required here');
  let divisor = ref.divisor ? parseQuantity(ref.divisor) : { num: 0n, den: 1n };
  if (divisor.num === 0n) divisor = { num: 1n, den: 1n };
  const [kind, name] = splitResource(ref.resource);
  const values = kind === 'limits' ? limitsWithAllocatable(c, allocatable) : c.resources?.requests;
  if (name === 'cpu') return ceilDiv(quantityMilliValue(qty(values, name)), quantityMilliValue(divisor)).toString();
  if (name === 'memory' || name === 'ephemeral-storage' || name.startsWith('hugepages-')) {
    return ceilDiv(quantityValue(qty(values, name)), quantityValue(divisor)).toString();
  }
  throw nodeletError('NDL_DOWNWARD_API', `unsupported container resource : ${ref.resource}`);
}

function splitResource(resource: string): ['limits' | 'requests', string] {
  const i = resource.indexOf('.');
  const kind = resource.slice(0, i);
  if (i < 0 || (kind !== 'limits' && kind !== 'requests')) throw nodeletError('NDL_DOWNWARD_API', `unsupported container resource : ${resource}`);
  return [kind, resource.slice(i + 1)];
}
