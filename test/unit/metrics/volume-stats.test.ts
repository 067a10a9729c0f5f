/** Pod volume usage: CSI NodeGetVolumeStats units, kubelet_volume_stats_* series and the Summary's `volume` entries. */
import { describe, expect, it } from 'vitest';
import { metricsText, setVolumeStats, summaryOf, type StatsSnapshot, type VolumeUsage } from '../../../core/metrics/index.ts';
import { usageOf, type PublishedVolume } from '../../../core/volumes/csi/volume-stats.ts';

const at = new Date('2026-01-02T03:04:05.678Z');
const vol = (o: Partial<VolumeUsage>): VolumeUsage => ({ podUid: 'u1', podNamespace: 'ns1', podName: 'p1', name: 'd', timestamp: at, ...o });
const counts = { pods: 0, containers: { running: 0, exited: 0, created: 0 }, perProvider: {} };
const series = (text: string) => text.split('\n').filter((l) => l.startsWith('kubelet_volume_stats_'));

describe('usageOf (upstream csi_metrics GetMetrics)', () => {
  it('maps BYTES to capacity/available/used and INODES to inodes/free/used (int64 strings)', () => {
    const v = { podUid: 'u1' } as PublishedVolume;
    const r = usageOf(
      v,
      {
        usage: [
          { unit: 'BYTES', total: '1000' as never, available: '600' as never, used: '400' as never },
          { unit: 'INODES', total: '50' as never, available: '45' as never, used: '5' as never },
        ],
        volume_condition: null,
      },
      at,
    );
    expect(r).toEqual({ volume: v, timestamp: at, capacityBytes: 1000, availableBytes: 600, usedBytes: 400, inodes: 50, inodesFree: 45, inodesUsed: 5 });
    expect(usageOf(v, { usage: [], volume_condition: null }, at)).toEqual({ volume: v, timestamp: at });
  });
});

describe('kubelet_volume_stats_*', () => {
  it('one series per PVC (first pod wins, as upstream), none for non-PVC volumes; unreported values are 0; replaced at each scrape', async () => {
    setVolumeStats([
      vol({ pvcName: 'data', capacityBytes: 1000, availableBytes: 600, usedBytes: 400 }),
      vol({ podUid: 'u2', podName: 'p2', pvcName: 'data', capacityBytes: 9 }),
      vol({ name: 'inline', capacityBytes: 5 }),
    ]);
    expect(series((await metricsText(counts)).text)).toEqual([
      'kubelet_volume_stats_capacity_bytes{namespace="ns1",persistentvolumeclaim="data"} 1000',
      'kubelet_volume_stats_available_bytes{namespace="ns1",persistentvolumeclaim="data"} 600',
      'kubelet_volume_stats_used_bytes{namespace="ns1",persistentvolumeclaim="data"} 400',
      'kubelet_volume_stats_inodes{namespace="ns1",persistentvolumeclaim="data"} 0',
      'kubelet_volume_stats_inodes_free{namespace="ns1",persistentvolumeclaim="data"} 0',
      'kubelet_volume_stats_inodes_used{namespace="ns1",persistentvolumeclaim="data"} 0',
    ]);
    setVolumeStats([]);
    expect(series((await metricsText(counts)).text)).toEqual([]);
  });
});

describe('summaryOf volumes', () => {
  it('adds `volume` to the pod (pvcRef for a claim), and an entry for a pod without container stats', () => {
    const snap: StatsSnapshot = {
      node: { nodeName: 'n1', startTime: at, timestamp: at, cpuNs: 1, workingSetBytes: 1, usageBytes: 1, rssBytes: 1 },
      pods: [{ namespace: 'ns1', name: 'p1', uid: 'u1', startTime: at, containers: [] }],
      volumes: [vol({ pvcName: 'data', capacityBytes: 1000, usedBytes: 1 }), vol({ podUid: 'u2', podName: 'p2', name: 'eph', inodes: 3 })],
      scrapeError: false,
    };
    const pods = (summaryOf(snap) as { pods: Record<string, unknown>[] }).pods;
    expect(pods.map((p) => p.volume)).toEqual([
      [{ time: '2026-01-02T03:04:05Z', capacityBytes: 1000, usedBytes: 1, name: 'd', pvcRef: { name: 'data', namespace: 'ns1' } }],
      [{ time: '2026-01-02T03:04:05Z', inodes: 3, name: 'eph' }],
    ]);
    expect(pods[1]).toMatchObject({ podRef: { name: 'p2', namespace: 'ns1', uid: 'u2' }, containers: [] });
  });
});
