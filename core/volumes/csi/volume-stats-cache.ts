/**
 * Volume usage kept for `--volume-stats-agg-period` (upstream's
 * `volumeStatsAggPeriod`, 1 m): upstream's fsResourceAnalyzer computes each
 * pod's volume usage once per period and `/stats/summary` and the
 * `kubelet_volume_stats_*` collector read the cached values, so a scrape does
 * not become one NodeGetVolumeStats per volume. Here a value is read on first
 * demand and kept for the period; concurrent demands share one read; a failed
 * read is not kept (the next scrape asks again). A negative period turns
 * volume stats off, 0 reads at every demand.
 */
import type { CsiVolumeUsage } from './volume-stats.ts';

interface Entry {
  readonly at: number;
  readonly value: Promise<CsiVolumeUsage | undefined>;
}

/** Per-volume usage cache (see the module comment). */
export class VolumeStatsCache {
  private readonly entries = new Map<string, Entry>();

  constructor(
    private readonly periodMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** False when the period is negative: no volume is read. */
  get enabled(): boolean {
    return this.periodMs >= 0;
  }

  /** The usage of volume `key`: the kept value while it is younger than the period, else `read()`'s. */
  get(key: string, read: () => Promise<CsiVolumeUsage | undefined>): Promise<CsiVolumeUsage | undefined> {
    const t = this.now();
    const e = this.entries.get(key);
    if (e && t - e.at < this.periodMs) return e.value;
    const value = read();
    const entry = { at: t, value };
    this.entries.set(key, entry);
    value.catch(() => {
      if (this.entries.get(key) === entry) this.entries.delete(key);
    });
    return value;
  }

  /** Drops volume `key` (its volume was torn down). */
  forget(key: string): void {
    this.entries.delete(key);
  }
}
