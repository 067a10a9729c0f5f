/**
 * `/stats/summary` in the shape of upstream's
 * `k8s.io/kubelet/pkg/apis/stats/v1alpha1` Summary: `node` (cpu, memory) and
 * `pods[]` (podRef, startTime, containers[] with cpu and memory, pod totals,
 * `volume[]` of CSI volumes whose driver reports NodeGetVolumeStats).
 * Fields nodelet cannot measure are left out, as upstream leaves out nil ones.
 */
import type { ContainerUsage, PodUsage, StatsSnapshot, VolumeUsage } from './stats-types.ts';

/** `time` in RFC 3339 without fractions (metav1.Time). */
const t = (d: Date): string => d.toISOString().replace(/\.\d+Z$/, 'Z');

/** CPUStats. */
export interface CpuStats {
  time: string;
  usageNanoCores?: number;
  usageCoreNanoSeconds?: number;
}
/** MemoryStats. */
export interface MemoryStats {
  time: string;
  availableBytes?: number;
  usageBytes?: number;
  workingSetBytes?: number;
  rssBytes?: number;
}

function cpu(time: Date, ns: number | undefined, nanoCores: number | undefined): CpuStats | undefined {
  if (ns === undefined) return undefined;
  return { time: t(time), ...(nanoCores !== undefined ? { usageNanoCores: Math.round(nanoCores) } : {}), usageCoreNanoSeconds: Math.round(ns) };
}

function memory(time: Date, ws: number | undefined, usage: number | undefined, extra: Partial<MemoryStats> = {}): MemoryStats | undefined {
  if (ws === undefined) return undefined;
  return { time: t(time), ...extra, usageBytes: usage ?? ws, workingSetBytes: ws };
}

const sum = (cs: readonly ContainerUsage[], f: (c: ContainerUsage) => number | undefined): number | undefined => {
  const vals = cs.map(f).filter((v): v is number => v !== undefined);
  return vals.length ? vals.reduce((a, b) => a + b, 0) : undefined;
};

/** Upstream VolumeStats: FsStats fields, `name`, and `pvcRef` for a PVC. */
function volumeStats(v: VolumeUsage): Record<string, unknown> {
  const fs = {
    availableBytes: v.availableBytes,
    capacityBytes: v.capacityBytes,
    usedBytes: v.usedBytes,
    inodesFree: v.inodesFree,
    inodes: v.inodes,
    inodesUsed: v.inodesUsed,
  };
  return {
    time: t(v.timestamp),
    ...Object.fromEntries(Object.entries(fs).filter(([, x]) => x !== undefined)),
    name: v.name,
    ...(v.pvcName ? { pvcRef: { name: v.pvcName, namespace: v.podNamespace } } : {}),
  };
}

/** The Summary object of a snapshot. */
export function summaryOf(s: StatsSnapshot): Record<string, unknown> {
  const n = s.node;
  const volumes = new Map<string, VolumeUsage[]>();
  for (const v of s.volumes ?? []) volumes.set(v.podUid, [...(volumes.get(v.podUid) ?? []), v]);
  // A pod with volume stats but no container stats still gets its entry.
  const pods: PodUsage[] = [...s.pods];
  for (const [uid, vs] of volumes) {
    if (!pods.some((p) => p.uid === uid)) pods.push({ uid, namespace: vs[0]!.podNamespace, name: vs[0]!.podName, containers: [] });
  }
  return {
    node: {
      nodeName: n.nodeName,
      startTime: t(n.startTime),
      cpu: cpu(n.timestamp, n.cpuNs, n.nanoCores),
      memory: memory(n.timestamp, n.workingSetBytes, n.usageBytes, {
        ...(n.availableBytes !== undefined ? { availableBytes: n.availableBytes } : {}),
        rssBytes: n.rssBytes,
      }),
    },
    pods: pods.map((p) => {
      const at = p.containers.reduce<Date | undefined>((a, c) => (!a || c.timestamp > a ? c.timestamp : a), undefined) ?? n.timestamp;
      return {
        podRef: { name: p.name, namespace: p.namespace, uid: p.uid },
        startTime: t(p.startTime ?? at),
        containers: p.containers.map((c) => ({
          name: c.name,
          startTime: t(c.startTime),
          cpu: cpu(c.timestamp, c.cpuNs, c.nanoCores),
          memory: memory(c.timestamp, c.workingSetBytes, c.usageBytes),
        })),
        cpu: cpu(
          at,
          sum(p.containers, (c) => c.cpuNs),
          sum(p.containers, (c) => c.nanoCores),
        ),
        memory: memory(
          at,
          sum(p.containers, (c) => c.workingSetBytes),
          sum(p.containers, (c) => c.usageBytes ?? c.workingSetBytes),
        ),
        ...(volumes.has(p.uid) ? { volume: volumes.get(p.uid)!.map(volumeStats) } : {}),
      };
    }),
  };
}
