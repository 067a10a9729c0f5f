/**
 * Ranking pods for eviction, as upstream's `pkg/kubelet/eviction/helpers.go`:
 *
 * - memory (`rankMemoryPressure`): pods whose memory usage exceeds their requests
 *   first, then lower priority first, then larger usage above requests first;
 * - disk (`rankDiskPressure`): the same with ephemeral-storage usage (emptyDirs
 *   and logs) against ephemeral-storage requests;
 * - pids (`rankPIDPressure`): lower priority first, then more processes first.
 *
 * A pod without stats is ranked before pods with stats (upstream evicts the one
 * it cannot measure first). Also here: the QoS class (`GetPodQOS`) and upstream's
 * eviction message.
 */
import type { V1Container, V1Pod } from '@kubernetes/client-node';
import { quantityUnits } from '../quantity/index.ts';
import { podRequest } from '../pods/index.ts';

/** What is known of a pod's usage. */
export interface PodUsageStats {
  /** Working set per container (bytes). */
  readonly containers: readonly { readonly name: string; readonly workingSetBytes?: number }[];
  /** Ephemeral-storage usage (emptyDirs + logs), when measured. */
  readonly diskBytes?: number;
  /** Processes/threads the pod uses, when known. */
  readonly processes?: number;
}

/** Looks a pod's stats up (undefined: not measured). */
export type StatsFn = (pod: V1Pod) => PodUsageStats | undefined;

/** A pod's QoS class. */
export type QosClass = 'Guaranteed' | 'Burstable' | 'BestEffort';

const QOS_RESOURCES = ['cpu', 'memory'] as const;

/** Upstream `GetPodQOS` (status.qosClass when the apiserver set it). */
export function podQos(pod: V1Pod): QosClass {
  const set = pod.status?.qosClass;
  if (set === 'Guaranteed' || set === 'Burstable' || set === 'BestEffort') return set;
  const containers: V1Container[] = [...(pod.spec?.initContainers ?? []), ...(pod.spec?.containers ?? [])];
  let any = false;
  let guaranteed = true;
  for (const c of containers) {
    const req = (c.resources?.requests ?? {}) as Record<string, string>;
    const lim = (c.resources?.limits ?? {}) as Record<string, string>;
    for (const r of QOS_RESOURCES) {
      const rq = quantityUnits(req[r]);
      const lm = quantityUnits(lim[r]);
      if (rq > 0 || lm > 0) any = true;
      if (!(lm > 0) || (req[r] !== undefined && rq !== lm)) guaranteed = false;
    }
  }
  if (!any) return 'BestEffort';
  return guaranteed ? 'Guaranteed' : 'Burstable';
}

/** A pod's memory working set, summed over its containers. */
export function podMemoryUsage(s: PodUsageStats): number {
  return s.containers.reduce((n, c) => n + (c.workingSetBytes ?? 0), 0);
}

type Cmp = (a: V1Pod, b: V1Pod) => number;

/** Upstream `cmpBool`: true first. */
const cmpBool = (a: boolean, b: boolean): number => (a === b ? 0 : a ? -1 : 1);

/** Lower priority first. */
export const byPriority: Cmp = (a, b) => (a.spec?.priority ?? 0) - (b.spec?.priority ?? 0);

function usageCmp(stats: StatsFn, usage: (s: PodUsageStats) => number | undefined, resource: string, exceedOnly: boolean): Cmp {
  return (a, b) => {
    const sa = stats(a);
    const sb = stats(b);
    const ua = sa && usage(sa);
    const ub = sb && usage(sb);
    if (ua === undefined || ub === undefined) return cmpBool(ua === undefined, ub === undefined);
    const oa = ua - podRequest(a, resource);
    const ob = ub - podRequest(b, resource);
    return exceedOnly ? cmpBool(oa > 0, ob > 0) : ob - oa;
  };
}

function orderedBy(...cmps: Cmp[]): Cmp {
  return (a, b) => {
    for (const c of cmps) {
      const r = c(a, b);
      if (r !== 0) return r;
    }
    return 0;
  };
}

/** Sorts `pods` (a copy) for memory pressure. */
export function rankMemoryPressure(pods: readonly V1Pod[], stats: StatsFn): V1Pod[] {
  const mem = (s: PodUsageStats) => podMemoryUsage(s);
  return [...pods].sort(orderedBy(usageCmp(stats, mem, 'memory', true), byPriority, usageCmp(stats, mem, 'memory', false)));
}

/** Sorts `pods` (a copy) for disk pressure. */
export function rankDiskPressure(pods: readonly V1Pod[], stats: StatsFn): V1Pod[] {
  const disk = (s: PodUsageStats) => s.diskBytes;
  return [...pods].sort(orderedBy(usageCmp(stats, disk, 'ephemeral-storage', true), byPriority, usageCmp(stats, disk, 'ephemeral-storage', false)));
}

/** Sorts `pods` (a copy) for PID pressure. */
export function rankPIDPressure(pods: readonly V1Pod[], stats: StatsFn): V1Pod[] {
  const procs: Cmp = (a, b) => (stats(b)?.processes ?? 0) - (stats(a)?.processes ?? 0);
  return [...pods].sort(orderedBy(byPriority, procs));
}

/**
 * Upstream's Go `resource.Quantity` canonical string of a byte count (BinarySI):
 * the largest power-of-1024 suffix dividing it exactly (`100Mi`, `2036Ki`), the
 * plain number otherwise (`<1024` values as DecimalSI: `1k` for 1000).
 */
export function formatBytes(n: number): string {
  const v = Math.trunc(n);
  if (v > -1024 && v < 1024) return v !== 0 && v % 1000 === 0 ? `${v / 1000}k` : String(v);
  const suffixes = ['', 'Ki', 'Mi', 'Gi', 'Ti', 'Pi', 'Ei'];
  let x = v;
  let i = 0;
  while (i < suffixes.length - 1 && x % 1024 === 0 && x !== 0) {
    x /= 1024;
    i++;
  }
  return `${x}${suffixes[i]}`;
}

/**
 * Upstream's `evictionMessage`: `The node was low on resource: <r>. Threshold quantity: <q>, available: <a>. `
 * then, per container using more than it requests, `Container <c> was using <u>, request is <q>, has larger consumption of <r>. `.
 */
export function evictionMessage(resource: string, pod: V1Pod, stats: PodUsageStats | undefined, threshold?: { quantity: number; available: number }): string {
  let msg = `The node was low on resource: ${resource}. `;
  if (threshold) msg += `Threshold quantity: ${formatBytes(threshold.quantity)}, available: ${formatBytes(threshold.available)}. `;
  if (resource !== 'memory' || !stats) return msg;
  for (const cs of stats.containers) {
    const c = pod.spec?.containers?.find((x) => x.name === cs.name);
    if (!c || cs.workingSetBytes === undefined) continue;
    const reqRaw = (c.resources?.requests as Record<string, string> | undefined)?.['memory'];
    const req = quantityUnits(reqRaw) || 0;
    if (cs.workingSetBytes > req)
      msg += `Container ${c.name} was using ${formatBytes(cs.workingSetBytes)}, request is ${reqRaw ?? '0'}, has larger consumption of ${resource}. `;
  }
  return msg;
}
