import { closeSync, mkdirSync, mkdtempSync, openSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { floorSlope, livePodPath, procFigures, slope } from '../../../bench/lib/soak.ts';

describe('the soak’s figures (bench/lib/soak.ts)', () => {
  it('fits the least-squares slope of a line, and of points around one', () => {
    const xs = [0, 100, 200, 300, 400];
    expect(slope(xs, [5, 6, 7, 8, 9])).toBeCloseTo(0.01);
    expect(slope(xs, [6, 5, 8, 7, 10])).toBeCloseTo(0.01, 6);
    expect(slope([1], [1])).toBeNaN();
  });

  it('the floor slope ignores transient spikes and sees a floor that rises', () => {
    const flat = Array.from({ length: 100 }, (_, i) => [i * 10, 49 + (i % 7 === 3 ? 8 : 0)] as const);
    expect(floorSlope(flat)).toBe(0);
    // One fd leaked every 100 pods, spikes on top.
    const leak = flat.map(([x, y]) => [x, y + Math.floor(x / 100)] as const);
    expect(floorSlope(leak) * 1000).toBeGreaterThan(9);
  });

  it('attributes open fds on a live pod’s files (its pod dir, its logs) to the pods alive', () => {
    const root = mkdtempSync(join(tmpdir(), 'soak-unit-'));
    const uid = '0b8e5f8a-1111-4222-8333-944445555666';
    try {
      mkdirSync(join(root, 'pods', uid, 'volumes'), { recursive: true });
      mkdirSync(join(root, 'logs', 'pods', `ns_p_${uid}`, 'main'), { recursive: true });
      const live = livePodPath(root, (u) => u === uid);
      expect(live(join(root, 'pods', uid, 'volumes'))).toBe(true);
      expect(live(join(root, 'logs', 'pods', `ns_p_${uid}`, 'main', '0.log'))).toBe(true);
      expect(live(join(root, 'pods', 'another-uid', 'volumes'))).toBe(false);
      expect(live(join(root, 'providers-data', 'wasi', 'runtime.log'))).toBe(false);
      const before = procFigures(process.pid, live)!;
      const fds = [openSync(join(root, 'logs', 'pods', `ns_p_${uid}`, 'main', '0.log'), 'w'), openSync(join(root, 'other'), 'w')];
      try {
        const after = procFigures(process.pid, live)!;
        expect(after.livePodFds - before.livePodFds).toBe(1);
        expect(after.fds - before.fds).toBe(2);
        expect(after.threads).toBeGreaterThanOrEqual(1);
        expect(after.rssMiB).toBeGreaterThan(0);
      } finally {
        for (const fd of fds) closeSync(fd);
      }
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
