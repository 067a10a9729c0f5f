/**
 * Usage of published CSI volumes, read with NodeGetVolumeStats (upstream
 * `pkg/volume/csi/csi_metrics.go` GetMetrics): only drivers that offer the
 * GET_VOLUME_STATS node capability are asked; BYTES usage gives capacity /
 * available / used bytes, INODES usage gives inodes / free / used. The
 * kubelet's `kubelet_volume_stats_*` metrics and `/stats/summary` read these.
 */
import type { NodeClient, NodeGetVolumeStatsResponse__Output } from '../../../sockets/csi.ts';
import { nodeGetCapabilities, nodeGetVolumeStats } from './csi-node-calls.ts';

/** One published volume of a pod, as the stats reader needs it. */
export interface PublishedVolume {
  readonly podUid: string;
  readonly podNamespace: string;
  readonly podName: string;
  /** The pod's volume name. */
  readonly name: string;
  /** The claim when the volume is a PVC. */
  readonly pvcName?: string;
  readonly driver: string;
  readonly volumeHandle: string;
  /** The publish target (`volume_path`). */
  readonly target: string;
  /** The staging path, '' when not staged. */
  readonly staging: string;
}

/** A volume's usage; fields the driver did not report are absent. */
export interface CsiVolumeUsage {
  readonly volume: PublishedVolume;
  readonly timestamp: Date;
  readonly capacityBytes?: number;
  readonly availableBytes?: number;
  readonly usedBytes?: number;
  readonly inodes?: number;
  readonly inodesFree?: number;
  readonly inodesUsed?: number;
}

/** Upstream GetMetrics' unit mapping. */
export function usageOf(volume: PublishedVolume, r: NodeGetVolumeStatsResponse__Output, timestamp = new Date()): CsiVolumeUsage {
  let out: CsiVolumeUsage = { volume, timestamp };
  for (const u of r.usage ?? []) {
    const total = Number(u.total ?? 0);
    const available = Number(u.available ?? 0);
    const used = Number(u.used ?? 0);
    if (u.unit === 'BYTES') out = { ...out, capacityBytes: total, availableBytes: available, usedBytes: used };
    else if (u.unit === 'INODES') out = { ...out, inodes: total, inodesFree: available, inodesUsed: used };
  }
  return out;
}

/** NodeGetVolumeStats of one volume; undefined when the driver does not offer GET_VOLUME_STATS. */
export async function readVolumeUsage(client: NodeClient, v: PublishedVolume, timeoutMs?: number): Promise<CsiVolumeUsage | undefined> {
  const caps = await nodeGetCapabilities(client, timeoutMs);
  if (!caps.has('GET_VOLUME_STATS')) return undefined;
  const r = await nodeGetVolumeStats(client, { volume_id: v.volumeHandle, volume_path: v.target, staging_target_path: v.staging }, timeoutMs);
  return usageOf(v, r);
}
