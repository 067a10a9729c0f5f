// Experiment (not part of `npm run bench`): one control plane, several nodelets one after
// another with different node flags; prints idle RSS and the main thread's heap spaces.
import { readFileSync } from 'node:fs';
import { clientsFor, disposeRoot, startBenchNodelet, startCluster, waitNodeReady, NODELET_NODE } from './lib/env.ts';
import { treeMemory, mib } from './lib/proc.ts';
import { mainThreadMemory } from './lib/trace.ts';
import { ensureBuilt } from '../test/harness/build-dist.ts';

const variants: string[][] = JSON.parse(process.env.VARIANTS ?? '[[]]');
const settle = Number(process.env.SETTLE_MS ?? 20000);
ensureBuilt();
const cluster = await startCluster();
const c = clientsFor(cluster.info);
try {
  for (const v of variants) {
    // "ENV:NAME=value" entries are environment variables of that nodelet, not node flags.
    const env = Object.fromEntries(v.filter((f) => f.startsWith('ENV:')).map((f) => f.slice(4).split('=', 2) as [string, string]));
    for (const [k, val] of Object.entries(env)) process.env[k] = val;
    const n = await startBenchNodelet(cluster.info, { maxPods: 600, nodeOptions: v.filter((f) => !f.startsWith('ENV:')) });
    for (const k of Object.keys(env)) delete process.env[k];
    try {
      await waitNodeReady(c, NODELET_NODE);
      // The node object outlives a nodelet: wait for this one's own start.
      for (let i = 0; i < 600 && !readFileSync(n.logFile, 'utf8').includes('nodelet is running'); i++) await new Promise((r) => setTimeout(r, 100));
      await new Promise((r) => setTimeout(r, settle));
      const m = treeMemory(n.pid);
      const mt = await mainThreadMemory(n.pid, n.traceFile);
      const rollup = Object.fromEntries(
        [...readFileSync(`/proc/${n.pid}/smaps_rollup`, 'utf8').matchAll(/^(Rss|Pss|Anonymous|Pss_File|Pss_Anon):\s+(\d+) kB/gm)].map((x) => [
          x[1],
          Math.round(Number(x[2]) / 102.4) / 10,
        ]),
      );
      console.log(JSON.stringify({ flags: v, rollup, rssMiB: mib(m.rss), pssMiB: m.pss === undefined ? undefined : mib(m.pss), threads: m.threads, mt }));
    } finally {
      await n.stop();
      disposeRoot(n.rootDir);
    }
  }
} finally {
  await cluster.stop();
}
