import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { processTree, treeCpuSeconds, treesCpuSeconds } from '../../../bench/lib/proc.ts';

describe('process trees from /proc (the bench’s CPU and memory figures)', () => {
  it('holds the root and its children, and not the root’s parent', async () => {
    const child = spawn('sleep', ['30'], { stdio: 'ignore' });
    try {
      await new Promise((r) => child.once('spawn', r));
      const tree = processTree(process.pid);
      expect(tree[0]).toBe(process.pid);
      expect(tree).toContain(child.pid);
      expect(tree).not.toContain(process.ppid);
    } finally {
      child.kill();
    }
  });

  it('counts the CPU a tree used, every root from one pass, the same as one root alone', () => {
    const before = treesCpuSeconds({ me: process.pid, init: 1 });
    // 150 ms of this process's own CPU (not of wall time: on a loaded machine the loop may get less of it).
    const cpu0 = process.cpuUsage();
    const used = () => {
      const d = process.cpuUsage(cpu0);
      return (d.user + d.system) / 1000;
    };
    let x = 0;
    while (used() < 150) x += Math.sqrt(x + 1);
    expect(x).toBeGreaterThan(0);
    const after = treesCpuSeconds({ me: process.pid, init: 1 });
    expect(Object.keys(after).sort()).toEqual(['init', 'me']);
    // 150 ms of busy loop, counted in 10 ms ticks.
    expect(after.me! - before.me!).toBeGreaterThanOrEqual(0.1);
    // init's tree holds this process too.
    expect(after.init!).toBeGreaterThanOrEqual(after.me!);
    expect(treeCpuSeconds(process.pid)).toBeGreaterThanOrEqual(after.me!);
  });
});
