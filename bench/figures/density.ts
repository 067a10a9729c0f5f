/**
 * Figures 2 and 3 (at 100 pods) and the replica part of figure 4: one
 * Deployment of sleeping `sleep` pods on nodelet, scaled through `steps`.
 * The pods use `hostNetwork` (they listen on nothing): a node's pod CIDR is a
 * /24, so pod IPs would cap a step at 253 pods.
 * At each step, once every replica was seen Running and `settleMs` passed:
 * nodelet's process-tree memory (RSS and PSS summed), per pod over the
 * idle baseline and absolute; at the first step also CPU over `cpuWindowMs`.
 */
import type { Clients } from '../lib/env.ts';
import { PodWatch } from '../lib/pod-watch.ts';
import { createNamespace, drainNamespace, podSpec } from '../lib/pods.ts';
import { mib, sampleTree, treeMemory, type TreeMemory } from '../lib/proc.ts';
import { readTrace, workersOf } from '../lib/trace.ts';
import { median } from '../lib/stats.ts';

/** One density step. */
export interface DensityStep {
  pods: number;
  allRunningMs: number;
  rssMiB: number;
  pssMiB?: number;
  /** Whole tree divided by pods (what the target is about). */
  rssTotalPerPodMiB: number;
  pssTotalPerPodMiB?: number;
  /** Increase over the idle tree divided by pods (the marginal cost). */
  rssPerPodMiB: number;
  pssPerPodMiB?: number;
  threads: number;
  pids: number;
}

/** Result of the density run. */
export interface DensityResult {
  steps: DensityStep[];
  at100?: { cores: number; windowS: number; rssMiB: number; pssMiB?: number };
  replicas: { firstStartMs?: number; hundredthStartMs?: number; medianStartMs?: number; traced: number };
}

const NS = 'density';

async function scaleTo(c: Clients, n: number): Promise<void> {
  await c.apps.replaceNamespacedDeploymentScale({
    name: 'sleepers',
    namespace: NS,
    body: { metadata: { name: 'sleepers', namespace: NS }, spec: { replicas: n } },
  });
}

function perPod(now: TreeMemory, base: TreeMemory, pods: number) {
  const r2 = (b: number) => Math.round((b / pods / 1048576) * 100) / 100;
  return {
    rssTotalPerPodMiB: r2(now.rss),
    pssTotalPerPodMiB: now.pss === undefined ? undefined : r2(now.pss),
    rssPerPodMiB: Math.round(((now.rss - base.rss) / pods / 1048576) * 100) / 100,
    pssPerPodMiB: now.pss !== undefined && base.pss !== undefined ? Math.round(((now.pss - base.pss) / pods / 1048576) * 100) / 100 : undefined,
  };
}

/** Runs the density steps on the nodelet with pid `pid`; `base` is its idle memory. */
export async function measureDensity(
  c: Clients,
  pid: number,
  traceFile: string,
  image: string,
  base: TreeMemory,
  o: { steps: number[]; settleMs: number; cpuWindowMs: number },
): Promise<DensityResult> {
  await createNamespace(c, NS);
  const w = await PodWatch.start(c.kc, NS);
  const steps: DensityStep[] = [];
  let at100: DensityResult['at100'];
  try {
    const labels = { app: 'sleepers' };
    const t0 = Date.now();
    await c.apps.createNamespacedDeployment({
      namespace: NS,
      body: {
        metadata: { name: 'sleepers' },
        spec: {
          replicas: o.steps[0],
          selector: { matchLabels: labels },
          template: { metadata: { labels }, spec: podSpec('nodelet', image, ['1000000'], { hostNetwork: true }) },
        },
      },
    });
    for (const [i, n] of o.steps.entries()) {
      const ts = Date.now();
      if (i > 0) await scaleTo(c, n);
      await w.until(`${n} replicas Running`, () => w.runningCount() >= n, 900_000);
      const allRunningMs = Date.now() - (i === 0 ? t0 : ts);
      await new Promise((r) => setTimeout(r, o.settleMs));
      const m = treeMemory(pid);
      steps.push({
        pods: n,
        allRunningMs,
        rssMiB: mib(m.rss),
        pssMiB: m.pss === undefined ? undefined : mib(m.pss),
        ...perPod(m, base, n),
        threads: m.threads,
        pids: m.pids,
      });
      process.stdout.write(`  density ${n}: ${JSON.stringify(steps.at(-1))}\n`);
      if (n === 100) {
        const s = await sampleTree(pid, o.cpuWindowMs);
        at100 = {
          cores: Math.round(s.cores * 1000) / 1000,
          windowS: Math.round(s.seconds),
          rssMiB: mib(s.memory.rss),
          pssMiB: s.memory.pss === undefined ? undefined : mib(s.memory.pss),
        };
      }
    }
    const ws = workersOf(readTrace(traceFile), NS);
    const replicas = {
      firstStartMs: r1(ws[0]?.startMs),
      hundredthStartMs: r1(ws[99]?.startMs),
      medianStartMs: r1(median(ws.slice(0, 100).map((x) => x.startMs))),
      traced: ws.length,
    };
    await c.apps.deleteNamespacedDeployment({ name: 'sleepers', namespace: NS });
    await drainNamespace(c, NS, 900_000);
    return { steps, at100, replicas };
  } finally {
    w.stop();
  }
}

function r1(v: number | undefined): number | undefined {
  return v === undefined || Number.isNaN(v) ? undefined : Math.round(v * 10) / 10;
}
