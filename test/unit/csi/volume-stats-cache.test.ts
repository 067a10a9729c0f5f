import { describe, expect, it } from 'vitest';
import { VolumeStatsCache } from '../../../core/volumes/csi/volume-stats-cache.ts';
import type { CsiVolumeUsage, PublishedVolume } from '../../../core/volumes/csi/index.ts';

const volume = { name: 'd' } as PublishedVolume;
const usage = (usedBytes: number): CsiVolumeUsage => ({ volume, timestamp: new Date(0), usedBytes });

describe('VolumeStatsCache (--volume-stats-agg-period)', () => {
  it('keeps a read for the period, shares a read in flight, and reads again after the period or a forget', async () => {
    let t = 0;
    let reads = 0;
    const c = new VolumeStatsCache(60_000, () => t);
    const read = () => Promise.resolve(usage(++reads));
    const [a, b] = await Promise.all([c.get('k', read), c.get('k', read)]);
    expect([a?.usedBytes, b?.usedBytes, reads]).toEqual([1, 1, 1]);
    t = 59_999;
    expect((await c.get('k', read))?.usedBytes).toBe(1);
    t = 60_000;
    expect((await c.get('k', read))?.usedBytes).toBe(2);
    c.forget('k');
    expect((await c.get('k', read))?.usedBytes).toBe(3);
    expect((await c.get('other', read))?.usedBytes).toBe(4);
  });

  it('does not keep a failed read; a negative period is off and 0 reads every time', async () => {
    let reads = 0;
    const c = new VolumeStatsCache(60_000, () => 0);
    await expect(c.get('k', () => (reads++, Promise.reject(new Error('driver down'))))).rejects.toThrow('driver down');
    expect((await c.get('k', () => (reads++, Promise.resolve(usage(7)))))?.usedBytes).toBe(7);
    expect(reads).toBe(2);
    expect(new VolumeStatsCache(-1).enabled).toBe(false);
    const zero = new VolumeStatsCache(0, () => 5);
    let n = 0;
    await zero.get('k', () => Promise.resolve(usage(++n)));
    expect((await zero.get('k', () => Promise.resolve(usage(++n))))?.usedBytes).toBe(2);
  });
});
