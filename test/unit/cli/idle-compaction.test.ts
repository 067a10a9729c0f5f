/**
 * The idle compaction (core/cli/idle-compaction.ts): one collection per busy spell, once the
 * event loop is idle and RSS grew enough since the last one; and V8's last-resort collection
 * itself, taken without a `gc` global.
 */
import { describe, expect, it } from 'vitest';
import { IdleCompaction, lastResortCollector, type IdleCompactionProbes } from '../../../core/cli/idle-compaction.ts';

const MiB = 2 ** 20;

/** A policy over scripted readings: `u` the utilization of each period, RSS as set. */
function scripted(u: number[], rss: { now: number }, afterCollect: number) {
  const collected: number[] = [];
  const probes: IdleCompactionProbes = {
    utilization: () => u.shift() ?? 0,
    rss: () => rss.now,
    collect: () => {
      collected.push(rss.now);
      rss.now = afterCollect;
    },
  };
  return { collected, probes };
}

describe('idle compaction', () => {
  it('collects once when the start is followed by an idle period, and not again while idle', () => {
    const rss = { now: 100 * MiB };
    const { collected, probes } = scripted([0.6, 0.01, 0.01, 0.0], rss, 90 * MiB);
    const reports: Array<{ rssBefore: number; rssAfter: number }> = [];
    const p = new IdleCompaction(probes, { onCompacted: (c) => reports.push(c) });
    expect([p.tick(), p.tick(), p.tick(), p.tick()]).toEqual([false, true, false, false]);
    expect(collected).toEqual([100 * MiB]);
    expect(reports).toMatchObject([{ rssBefore: 100 * MiB, rssAfter: 90 * MiB }]);
  });

  it('collects again after a busy spell that grew RSS past the growth bound, and not after one that did not', () => {
    const rss = { now: 100 * MiB };
    const { collected, probes } = scripted([0.01, 0.3, 0.01, 0.4, 0.01], rss, 90 * MiB);
    const p = new IdleCompaction(probes, { growthBytes: 4 * MiB });
    expect(p.tick()).toBe(true); // the start's spell
    expect(p.tick()).toBe(false); // busy
    rss.now = 92 * MiB; // 2 MiB over what the collection left
    expect(p.tick()).toBe(false);
    expect(p.tick()).toBe(false); // busy again
    rss.now = 99 * MiB;
    expect(p.tick()).toBe(true);
    expect(collected).toEqual([100 * MiB, 99 * MiB]);
  });

  it('waits through periods that are neither busy nor idle', () => {
    const rss = { now: 100 * MiB };
    const { collected, probes } = scripted([0.5, 0.03, 0.04, 0.03, 0.001], rss, 80 * MiB);
    const p = new IdleCompaction(probes);
    expect([p.tick(), p.tick(), p.tick(), p.tick(), p.tick()]).toEqual([false, false, false, false, true]);
    expect(collected).toHaveLength(1);
  });

  it("V8's last-resort collection runs and frees what is unreachable, with no gc global left behind", () => {
    const collect = lastResortCollector();
    expect(collect).toBeTypeOf('function');
    expect((globalThis as { gc?: unknown }).gc).toBeUndefined();
    let garbage: unknown[] | undefined = Array.from({ length: 200_000 }, (_, i) => ({ i, s: `x${i}` }));
    const held = process.memoryUsage().heapUsed;
    expect(garbage.length).toBe(200_000);
    garbage = undefined;
    collect!();
    expect(process.memoryUsage().heapUsed).toBeLessThan(held - 5 * MiB);
    expect(garbage).toBeUndefined();
  });
});
