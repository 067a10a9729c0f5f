/**
 * Figure 1, pod start latency. For each pod: the time this process received
 * the first watch event showing it Running, minus
 *   - headline: the client-side start of its create call (ms resolution);
 *   - sig-scalability: its creationTimestamp (1 s resolution, truncated, so
 *     up to 1 s too long).
 * Single: n pods one after the other (each waited for). Burst: n pods created
 * at once (all create calls in flight together).
 */
import type { Clients } from '../lib/env.ts';
import { PodWatch } from '../lib/pod-watch.ts';
import { createNamespace, drainNamespace, podSpec, type Target } from '../lib/pods.ts';
import { median, summary } from '../lib/stats.ts';

/** One latency figure for one target. */
export interface LatencyResult {
  target: Target;
  single: { n: number; medianMs: number; medianSigMs: number; samplesMs: number[] };
  burst: { n: number; headline: ReturnType<typeof summary>; sig: ReturnType<typeof summary>; allRunningMs: number };
}

async function createPod(c: Clients, ns: string, name: string, target: Target, image: string): Promise<number> {
  const t = Date.now();
  await c.core.createNamespacedPod({ namespace: ns, body: { metadata: { name, labels: { bench: 'latency' } }, spec: podSpec(target, image, ['1000000']) } });
  return t;
}

/** Measures single-pod and burst start latency on `target`. */
export async function measureLatency(c: Clients, target: Target, image: string, o: { single: number; burst: number }): Promise<LatencyResult> {
  const ns = `lat-${target}`;
  await createNamespace(c, ns);
  const w = await PodWatch.start(c.kc, ns);
  try {
    const single: number[] = [];
    const singleSig: number[] = [];
    for (let i = 0; i < o.single; i++) {
      const name = `single-${i}`;
      const t = await createPod(c, ns, name, target, image);
      await w.until(`${name} Running`, () => w.pods.get(name)?.running !== undefined, 120_000);
      const p = w.pods.get(name)!;
      single.push(p.running! - t);
      singleSig.push(p.running! - p.created);
    }
    await drainNamespace(c, ns);
    const starts = new Map<string, number>();
    const names = Array.from({ length: o.burst }, (_, i) => `burst-${i}`);
    const t0 = Date.now();
    await Promise.all(names.map(async (n) => starts.set(n, await createPod(c, ns, n, target, image))));
    await w.until(`${o.burst} burst pods Running`, () => names.every((n) => w.pods.get(n)?.running !== undefined), 600_000);
    const lat = names.map((n) => w.pods.get(n)!.running! - starts.get(n)!);
    const sig = names.map((n) => w.pods.get(n)!.running! - w.pods.get(n)!.created);
    const allRunningMs = Math.max(...names.map((n) => w.pods.get(n)!.running!)) - t0;
    await drainNamespace(c, ns);
    return {
      target,
      single: { n: o.single, medianMs: Math.round(median(single)), medianSigMs: Math.round(median(singleSig)), samplesMs: single },
      burst: { n: o.burst, headline: summary(lat), sig: summary(sig), allRunningMs },
    };
  } finally {
    w.stop();
  }
}
