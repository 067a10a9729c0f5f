/**
 * The idle compaction (core/cli/idle-compaction.ts): a collection when the event loop is idle and
 * the heap grew enough since the last one; and V8's last-resort collection itself, taken without a
 * `gc` global.
 */
import { describe, expect, it } from 'vitest';
import { IdleCompaction, lastResortCollector, type IdleCompactionProbes } from '../../../core/cli/idle-compaction.ts';

const MiB = 2 ** 20;

/** Probes over scripted readings: `u` the utilization of each period; the heap as set, `after` once collected. */
function scripted(u: number[], heap: { now: number }, after: number) {
  const collected: number[] = [];
  const probes: IdleCompactionProbes = {
    utilization: () => u.shift() ?? 0,
    heapBytes: () => heap.now,
    rss: () => heap.now + 60 * MiB,
    collect: () => {
      collected.push(heap.now);
      heap.now = after;
    },
  };
  return { collected, probes };
}

describe('idle compaction', () => {
  it('collects in the first idle period after the start, and not again while the heap stays', () => {
    const heap = { now: 30 * MiB };
    const { collected, probes } = scripted([0.6, 0.01, 0.01, 0.0], heap, 22 * MiB);
    const reports: Array<{ rssBefore: number; rssAfter: number }> = [];
    const p = new IdleCompaction(probes, { onCompacted: (c) => reports.push(c) });
    expect([p.tick(), p.tick(), p.tick(), p.tick()]).toEqual([false, true, false, false]);
    expect(collected).toEqual([30 * MiB]);
    expect(reports).toMatchObject([{ rssBefore: 90 * MiB, rssAfter: 82 * MiB }]);
  });

  it('collects again once the heap grew past the bound over what the last collection left, when idle', () => {
    const heap = { now: 30 * MiB };
    const { collected, probes } = scripted([0.01, 0.3, 0.01, 0.4, 0.01], heap, 22 * MiB);
    const p = new IdleCompaction(probes, { growthBytes: 4 * MiB });
    expect(p.tick()).toBe(true);
    heap.now = 40 * MiB; // a burst
    expect(p.tick()).toBe(false); // busy: not now
    heap.now = 24 * MiB; // V8's own collections brought it back near the base
    expect(p.tick()).toBe(false);
    heap.now = 27 * MiB;
    expect(p.tick()).toBe(false); // busy
    expect(p.tick()).toBe(true); // idle, 5 MiB over the base
    expect(collected).toEqual([30 * MiB, 27 * MiB]);
  });

  it('waits through periods that are not idle', () => {
    const heap = { now: 30 * MiB };
    const { collected, probes } = scripted([0.5, 0.03, 0.04, 0.021, 0.001], heap, 22 * MiB);
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
