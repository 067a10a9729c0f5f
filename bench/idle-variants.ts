// Experiment (not part of `npm run bench`): one control plane, several nodelets one after
// another with different node flags; prints idle RSS and the main thread's heap spaces.
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
    const n = await startBenchNodelet(cluster.info, { maxPods: 600, nodeOptions: v });
    try {
      await waitNodeReady(c, NODELET_NODE);
      await new Promise((r) => setTimeout(r, settle));
      const m = treeMemory(n.pid);
      const mt = await mainThreadMemory(n.pid, n.traceFile);
      console.log(JSON.stringify({ flags: v, rssMiB: mib(m.rss), pssMiB: m.pss === undefined ? undefined : mib(m.pss), threads: m.threads, mt }));
    } finally {
      await n.stop();
      disposeRoot(n.rootDir);
    }
  }
} finally {
  await cluster.stop();
}
