/**
 * Figure 1, pod start latency. For each pod: the time this process received
 * the first watch event showing it Running, minus
 *   - headline: the client-side start of its create call (ms resolution);
 *   - sig-scalability: its creationTimestamp (1 s resolution, truncated, so
 *     up to 1 s too long).
 * Single: n pods one after the other (each waited for). Burst: n pods created
 * at once (all create calls in flight together).
 *
 * A burst's p99 on two shared cores swings with the machine (kwok's, of
 * unchanged code, from 702 to 1656 ms in one session), so the bench takes
 * several burst rounds per node, interleaved between the nodes
 * ({@link measureBurst}), and compares the nodes by their median round
 * ({@link medianRound}); every round is kept.
 *
 * Each round also records the CPU time the control plane and the node used
 * from its first create call until all its pods were Running ({@link CpuProbe}):
 * on two shared cores a node's own CPU and the control-plane work its calls
 * cause are what its pods wait for.
 */
import type { Clients } from '../lib/env.ts';
import { PodWatch } from '../lib/pod-watch.ts';
import { createNamespace, drainNamespace, podSpec, type Target } from '../lib/pods.ts';
import { median, summary } from '../lib/stats.ts';

/** CPU seconds (user + system) used so far by each watched process (tree), by name. */
export type CpuProbe = () => Record<string, number>;

/** The CPU each watched process used during one burst round. */
export interface BurstCpu {
  /** From just before the first create call until all pods were seen Running. */
  windowMs: number;
  /** CPU seconds by process name (as the {@link CpuProbe} names them). */
  seconds: Record<string, number>;
}

/** The CPU seconds each process used between two probes (rounded to 0.01 s); names missing from either are left out. */
export function cpuBetween(before: Record<string, number>, after: Record<string, number>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [name, s] of Object.entries(after)) if (before[name] !== undefined) out[name] = Math.round((s - before[name]) * 100) / 100;
  return out;
}

/** A table cell for {@link BurstCpu}: each process's seconds, their sum, and the cores that sum kept busy over the window. */
export function cpuCell(cpu: BurstCpu): string {
  const total = Object.values(cpu.seconds).reduce((a, b) => a + b, 0);
  const each = Object.entries(cpu.seconds).map(([name, s]) => `${name} ${s.toFixed(2)}`);
  return `${each.join(', ')}; ${total.toFixed(2)} s of CPU in ${(cpu.windowMs / 1000).toFixed(2)} s (${(total / (cpu.windowMs / 1000)).toFixed(2)} cores)`;
}

/** One burst of pods created at once. */
export interface BurstRound {
  n: number;
  headline: ReturnType<typeof summary>;
  sig: ReturnType<typeof summary>;
  /** From the watch event showing a pod bound to the node to the one showing it Running: the node's share, without the scheduler's. */
  fromBound: ReturnType<typeof summary>;
  allRunningMs: number;
  /** CPU used during the round (when the bench gave a probe). */
  cpu?: BurstCpu;
}

/** One latency figure for one target. */
export interface LatencyResult {
  target: Target;
  single: { n: number; medianMs: number; medianSigMs: number; samplesMs: number[] };
  /** The round with the median headline p99 of {@link rounds} (the only round until more are added). */
  burst: BurstRound;
  /** Every burst round, in the order taken (the first one right after the single pods). */
  rounds: BurstRound[];
}

async function createPod(c: Clients, ns: string, name: string, target: Target, image: string): Promise<number> {
  const t = Date.now();
  await c.core.createNamespacedPod({ namespace: ns, body: { metadata: { name, labels: { bench: 'latency' } }, spec: podSpec(target, image, ['1000000']) } });
  return t;
}

const namespaceOf = (target: Target) => `lat-${target}`;

async function burstIn(c: Clients, w: PodWatch, ns: string, target: Target, image: string, n: number, cpu?: CpuProbe): Promise<BurstRound> {
  const starts = new Map<string, number>();
  const names = Array.from({ length: n }, (_, i) => `burst-${i}`);
  const cpu0 = cpu?.();
  const t0 = Date.now();
  await Promise.all(names.map(async (name) => starts.set(name, await createPod(c, ns, name, target, image))));
  await w.until(`${n} burst pods Running`, () => names.every((name) => w.pods.get(name)?.running !== undefined), 600_000);
  const used = cpu && cpu0 ? { windowMs: Date.now() - t0, seconds: cpuBetween(cpu0, cpu()) } : undefined;
  const lat = names.map((name) => w.pods.get(name)!.running! - starts.get(name)!);
  const sig = names.map((name) => w.pods.get(name)!.running! - w.pods.get(name)!.created);
  const fromBound = names.map((name) => w.pods.get(name)!.running! - (w.pods.get(name)!.bound ?? Number.NaN)).filter(Number.isFinite);
  const allRunningMs = Math.max(...names.map((name) => w.pods.get(name)!.running!)) - t0;
  await drainNamespace(c, ns);
  return { n, headline: summary(lat), sig: summary(sig), fromBound: summary(fromBound), allRunningMs, ...(used ? { cpu: used } : {}) };
}

/** Measures single-pod and burst start latency on `target` (one burst round). */
export async function measureLatency(c: Clients, target: Target, image: string, o: { single: number; burst: number; cpu?: CpuProbe }): Promise<LatencyResult> {
  const ns = namespaceOf(target);
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
    const burst = await burstIn(c, w, ns, target, image, o.burst, o.cpu);
    return {
      target,
      single: { n: o.single, medianMs: Math.round(median(single)), medianSigMs: Math.round(median(singleSig)), samplesMs: single },
      burst,
      rounds: [burst],
    };
  } finally {
    w.stop();
  }
}

/** One more burst round on `target`, in the namespace {@link measureLatency} made (a fresh watch, names reused after its drain). */
export async function measureBurst(c: Clients, target: Target, image: string, n: number, cpu?: CpuProbe): Promise<BurstRound> {
  const w = await PodWatch.start(c.kc, namespaceOf(target));
  try {
    return await burstIn(c, w, namespaceOf(target), target, image, n, cpu);
  } finally {
    w.stop();
  }
}

/** The round with the median headline p99 (the lower middle one of an even count). */
export function medianRound(rounds: readonly BurstRound[]): BurstRound {
  if (rounds.length === 0) throw new Error('no burst rounds');
  const s = [...rounds].sort((a, b) => a.headline.p99 - b.headline.p99);
  return s[(s.length - 1) >> 1]!;
}
