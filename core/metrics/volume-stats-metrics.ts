/**
 * Upstream's `kubelet_volume_stats_*` gauges (pkg/kubelet/metrics/collectors/
 * volume_stats.go) on `/metrics`: one series per PVC (labels `namespace`,
 * `persistentvolumeclaim`), the first pod volume seen for a claim wins, as
 * upstream; volumes that are no PVC are not reported. Set from the volume
 * usage at scrape time (a value the driver did not report is 0).
 *
 * | name | meaning |
 * | --- | --- |
 * | kubelet_volume_stats_capacity_bytes | capacity in bytes of the volume |
 * | kubelet_volume_stats_available_bytes | number of available bytes in the volume |
 * | kubelet_volume_stats_used_bytes | number of used bytes in the volume |
 * | kubelet_volume_stats_inodes | maximum number of inodes in the volume |
 * | kubelet_volume_stats_inodes_free | number of free inodes in the volume |
 * | kubelet_volume_stats_inodes_used | number of used inodes in the volume |
 */
import { Gauge } from './prom-client.ts';
import { registry } from './kubelet-metrics.ts';
import type { VolumeUsage } from './stats-types.ts';

const labelNames = ['namespace', 'persistentvolumeclaim'] as const;
const gauge = (name: string, help: string) => new Gauge({ name: `kubelet_volume_stats_${name}`, help, labelNames, registers: [registry] });

const GAUGES: readonly [Gauge<(typeof labelNames)[number]>, (v: VolumeUsage) => number | undefined][] = [
  [gauge('capacity_bytes', 'Capacity in bytes of the volume'), (v) => v.capacityBytes],
  [gauge('available_bytes', 'Number of available bytes in the volume'), (v) => v.availableBytes],
  [gauge('used_bytes', 'Number of used bytes in the volume'), (v) => v.usedBytes],
  [gauge('inodes', 'Maximum number of inodes in the volume'), (v) => v.inodes],
  [gauge('inodes_free', 'Number of free inodes in the volume'), (v) => v.inodesFree],
  [gauge('inodes_used', 'Number of used inodes in the volume'), (v) => v.inodesUsed],
];

/** Replaces every `kubelet_volume_stats_*` series with those of `volumes` (PVCs only, first per claim). */
export function setVolumeStats(volumes: readonly VolumeUsage[]): void {
  for (const [g] of GAUGES) g.reset();
  const seen = new Set<string>();
  for (const v of volumes) {
    if (!v.pvcName) continue;
    const key = `${v.podNamespace}/${v.pvcName}`;
    if (seen.has(key)) continue;
    seen.add(key);
    const labels = { namespace: v.podNamespace, persistentvolumeclaim: v.pvcName };
    for (const [g, value] of GAUGES) g.set(labels, value(v) ?? 0);
  }
}
