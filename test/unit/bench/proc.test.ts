import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { Worker } from 'node:worker_threads';
import { processTree, treeCpuSeconds, treesCpuByThreadKind, treesCpuSeconds } from '../../../bench/lib/proc.ts';

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

  it('splits a tree’s CPU by thread kind: a busy worker thread counts as `workers`, not as the main thread', async () => {
    const before = treesCpuByThreadKind({ me: process.pid });
    // 200 ms of the worker's own CPU, then it stays alive (a thread that ended counts as `ended`).
    const w = new Worker(
      `const { parentPort } = require('node:worker_threads'); const c0 = process.threadCpuUsage?.() ?? process.cpuUsage();
       const used = () => { const d = process.threadCpuUsage ? process.threadCpuUsage(c0) : process.cpuUsage(c0); return (d.user + d.system) / 1000; };
       let x = 0; while (used() < 200) x += Math.sqrt(x + 1); parentPort.postMessage(x); setInterval(() => {}, 1000);`,
      { eval: true },
    );
    try {
      await new Promise((r) => w.once('message', r));
      const after = treesCpuByThreadKind({ me: process.pid });
      expect((after.workers ?? 0) - (before.workers ?? 0)).toBeGreaterThanOrEqual(0.15);
      expect(after.main).toBeGreaterThan(0);
      const total = Object.values(after).reduce((a, b) => a + b, 0);
      expect(total).toBeCloseTo(treeCpuSeconds(process.pid), 1);
    } finally {
      await w.terminate();
    }
  });
});
