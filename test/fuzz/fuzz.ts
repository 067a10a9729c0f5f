/**
 * The fuzz run: starts a standalone nodelet and a lying registry, feeds each
 * target its share of `count` generated inputs (seeded), checks the oracles
 * after each target, and returns the report.
 */
import { FuzzEnvironment } from './environment.ts';
import { LyingRegistry } from './lying-registry.ts';
import { summarize, type FuzzReport, type Outcome, type TargetName } from './outcome.ts';
import { Rng } from './rng.ts';
import { fuzzKubeletApi } from './targets/kubelet-api.ts';
import { fuzzOciContent } from './targets/oci-content.ts';
import { fuzzPluginSockets } from './targets/plugin-sockets.ts';
import { fuzzStaticPods } from './targets/static-pods.ts';
import { fuzzWasmModules } from './targets/wasm-modules.ts';

/** Options of {@link runFuzz}. */
export interface FuzzOptions {
  readonly seed: number;
  /** Inputs in all (split between the targets by {@link SHARES}). */
  readonly count: number;
  readonly targets?: readonly TargetName[];
  /** Called with progress lines. */
  readonly progress?: (line: string) => void;
}

/** Each target's share of the inputs. */
export const SHARES: Record<TargetName, number> = {
  'kubelet-api': 0.5,
  'static-pods': 0.18,
  'wasm-modules': 0.12,
  'oci-content': 0.12,
  'plugin-sockets': 0.08,
};

/** Runs the suite; the nodelet and the registry are always stopped. */
export async function runFuzz(o: FuzzOptions): Promise<FuzzReport> {
  const started = Date.now();
  const targets = o.targets ?? (Object.keys(SHARES) as TargetName[]);
  const total = targets.reduce((s, t) => s + SHARES[t], 0);
  const share = (t: TargetName) => Math.max(1, Math.round((o.count * SHARES[t]) / total));
  const outcomes: Outcome[] = [];
  const record = (x: Outcome) => outcomes.push(x);
  const env = new FuzzEnvironment();
  const reg = new LyingRegistry();
  let escapes: string[] = [];
  try {
    await reg.start();
    await env.start();
    for (const t of targets) {
      const rng = new Rng(o.seed * 31 + t.length);
      const n = share(t);
      o.progress?.(`fuzz: ${t}: ${n} inputs`);
      const before = outcomes.length;
      if (t === 'kubelet-api') await fuzzKubeletApi(env, rng, n, record);
      else if (t === 'static-pods') await fuzzStaticPods(env, rng, n, record);
      else if (t === 'wasm-modules') await fuzzWasmModules(env, rng, n, record);
      else if (t === 'oci-content') await fuzzOciContent(env, reg, rng, n, record);
      else await fuzzPluginSockets(env, rng, n, record);
      if (!env.alive()) {
        record({ target: t, input: 'after the target', verdict: 'crash', detail: env.exitDescription() });
        break;
      }
      if (!(await env.healthz())) record({ target: t, input: 'after the target', verdict: 'crash', detail: '/healthz did not answer' });
      o.progress?.(
        `fuzz: ${t}: ${outcomes.length - before} outcomes, ${outcomes.slice(before).filter((x) => x.verdict !== 'classified').length} not classified`,
      );
    }
    escapes = await env.escapes();
  } finally {
    await env.dispose().catch(() => undefined);
    await reg.stop().catch(() => undefined);
  }
  return summarize(o.seed, outcomes, escapes, (Date.now() - started) / 1000);
}

/** Whether the run found nothing: every input classified, nothing outside the roots. */
export function passed(r: FuzzReport): boolean {
  return r.failures.length === 0 && r.escapes.length === 0;
}
