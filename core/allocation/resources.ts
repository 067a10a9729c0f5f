/**
 * Container resources as the allocation manager handles them: a pod's allocation
 * (upstream `allocationFromPod`), a pod with its allocation laid over its spec
 * (`updatePodFromAllocation`), and `v1.ResourceRequirements` written as Go writes it.
 */
import type { V1Container, V1Pod, V1ResourceRequirements } from '@kubernetes/client-node';
import { isResizable, podRequest } from '../pods/index.ts';
import { milliCpu, quantityUnits } from '../kube/index.ts';
import type { PodResourceInfo } from './allocation-state.ts';

/** A copy of map `m` with its keys sorted (Go's JSON writes map keys sorted). */
export function sortedMap<T>(m: Readonly<Record<string, T>>): Record<string, T> {
  const out: Record<string, T> = {};
  for (const k of Object.keys(m).sort()) out[k] = m[k]!;
  return out;
}

/** `r` as Go writes a `v1.ResourceRequirements`: limits, requests, claims, empty ones left out, map keys sorted. */
export function goRequirements(r: V1ResourceRequirements | undefined): V1ResourceRequirements {
  const out: V1ResourceRequirements = {};
  if (r?.limits && Object.keys(r.limits).length) out.limits = sortedMap(r.limits);
  if (r?.requests && Object.keys(r.requests).length) out.requests = sortedMap(r.requests);
  if (r?.claims?.length) out.claims = r.claims;
  return out;
}

/** Each container of `pod` with whether it is an init container (upstream `ContainerIter`, init containers first). */
export function containersOf(pod: V1Pod): Array<{ c: V1Container; init: boolean }> {
  return [...(pod.spec?.initContainers ?? []).map((c) => ({ c, init: true })), ...(pod.spec?.containers ?? []).map((c) => ({ c, init: false }))];
}

/** What `pod` asks for its resizable containers (upstream `allocationFromPod`). */
export function allocationFromPod(pod: V1Pod): PodResourceInfo {
  const out: PodResourceInfo = { ContainerResources: {}, PodLevelResources: null };
  for (const { c, init } of containersOf(pod)) if (isResizable(c, init)) out.ContainerResources[c.name] = goRequirements(c.resources);
  return out;
}

/** True when `a` and `b` are the same resources (quantities compared by value, as Go's semantic equality). */
export function sameResources(a: V1ResourceRequirements | undefined, b: V1ResourceRequirements | undefined): boolean {
  const same = (x: Record<string, string> | undefined, y: Record<string, string> | undefined) => {
    const keys = new Set([...Object.keys(x ?? {}), ...Object.keys(y ?? {})]);
    for (const k of keys) {
      const p = x?.[k];
      const q = y?.[k];
      if (p === undefined || q === undefined) return false;
      if (p !== q && value(k, p) !== value(k, q)) return false;
    }
    return true;
  };
  return same(a?.limits, b?.limits) && same(a?.requests, b?.requests) && JSON.stringify(a?.claims ?? []) === JSON.stringify(b?.claims ?? []);
}

/** A quantity's value for comparison: millicores for cpu, else units. */
function value(resource: string, q: string): number {
  return resource === 'cpu' ? milliCpu(q) : quantityUnits(q);
}

/**
 * `pod` with the allocated resources of `info` laid over its containers' (upstream
 * `updatePodFromAllocation`); a copy only when something differs. `updated` says whether it did.
 */
export function podFromAllocation(pod: V1Pod, info: PodResourceInfo | undefined): { pod: V1Pod; updated: boolean } {
  if (!info || !pod.spec) return { pod, updated: false };
  let updated = false;
  const lay = (cs: V1Container[] | undefined) =>
    cs?.map((c) => {
      const a = info.ContainerResources[c.name];
      if (!a || sameResources(c.resources, a)) return c;
      updated = true;
      return { ...c, resources: a };
    });
  const spec = { ...pod.spec, containers: lay(pod.spec.containers)!, initContainers: lay(pod.spec.initContainers) };
  if (!pod.spec.initContainers) delete spec.initContainers;
  return updated ? { pod: { ...pod, spec }, updated } : { pod, updated };
}

/** The memory (bytes) and cpu (millicores) requests of a pod, as admission sums them (upstream `PodRequests`: sidecars, init containers, overhead). */
export function podRequests(pod: V1Pod): { memory: number; cpu: number } {
  return { memory: podRequest(pod, 'memory'), cpu: podRequest(pod, 'cpu') };
}
