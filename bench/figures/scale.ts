/**
 * Scale: one Deployment of sleeping pods created at 0 replicas and
 * scaled to `pods` at once, on nodelet or on kubemark's hollow node (the
 * upstream kubelet, fake runtime). Reported: the time from the scale call
 * until every replica was seen Running (this process's watch), the pod start
 * latency percentiles (scale call → Running), and for nodelet its process
 * tree's CPU (cores averaged over the window) and max RSS sampled every second
 * during it, plus the RSS once all run.
 */
import type { Clients } from '../lib/env.ts';
import { PodWatch } from '../lib/pod-watch.ts';
import { createNamespace, drainNamespace, podSpec, type Target } from '../lib/pods.ts';
import { mib, treeCpuSeconds, treeMemory } from '../lib/proc.ts';
import { summary } from '../lib/stats.ts';

/** The scale figure of one node. */
export interface ScaleResult {
  target: Target;
  pods: number;
  allRunningMs: number;
  latency: ReturnType<typeof summary>;
  /** nodelet only: its tree during the scale-up. */
  nodelet?: { cores: number; maxRssMiB: number; rssAtEndMiB: number };
}

/** Scales a Deployment on `target` from 0 to `pods` and measures it; `pid` is nodelet's (for CPU and RSS), if the target is nodelet. */
export async function measureScale(c: Clients, target: Target, image: string, pods: number, pid?: number): Promise<ScaleResult> {
  const ns = `scale-${target}`;
  await createNamespace(c, ns);
  const w = await PodWatch.start(c.kc, ns);
  const labels = { app: 'scale' };
  try {
    await c.apps.createNamespacedDeployment({
      namespace: ns,
      body: {
        metadata: { name: 'scale' },
        spec: { replicas: 0, selector: { matchLabels: labels }, template: { metadata: { labels }, spec: podSpec(target, image, ['1000000']) } },
      },
    });
    const cpu0 = pid ? treeCpuSeconds(pid) : 0;
    let maxRss = 0;
    const sampler = pid ? setInterval(() => (maxRss = Math.max(maxRss, treeMemory(pid).rss)), 1000) : undefined;
    const t0 = Date.now();
    await c.apps.replaceNamespacedDeploymentScale({
      name: 'scale',
      namespace: ns,
      body: { metadata: { name: 'scale', namespace: ns }, spec: { replicas: pods } },
    });
    try {
      await w.until(`${pods} replicas Running on ${target}`, () => w.runningCount() >= pods, 1_800_000);
    } finally {
      if (sampler) clearInterval(sampler);
    }
    const allRunningMs = Date.now() - t0;
    const lat = [...w.pods.values()].flatMap((p) => (p.running !== undefined ? [p.running - t0] : []));
    const r: ScaleResult = { target, pods, allRunningMs, latency: summary(lat) };
    if (pid) {
      const end = treeMemory(pid);
      r.nodelet = {
        cores: Math.round(((treeCpuSeconds(pid) - cpu0) / (allRunningMs / 1000)) * 1000) / 1000,
        maxRssMiB: mib(Math.max(maxRss, end.rss)),
        rssAtEndMiB: mib(end.rss),
      };
    }
    process.stdout.write(`  scale ${target} 0 → ${pods}: ${JSON.stringify(r)}\n`);
    await c.apps.deleteNamespacedDeployment({ name: 'scale', namespace: ns });
    await drainNamespace(c, ns, 1_800_000);
    return r;
  } finally {
    w.stop();
  }
}
