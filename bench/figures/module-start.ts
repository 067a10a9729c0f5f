/**
 * Figure 4, module start.
 *   isolation: a fresh `node` process per sample compiles the module (cold),
 *     instantiates it with node:wasi imports, and compiles it again; median of 3.
 *   in nodelet (bench trace preload): the cold pod's WebAssembly.compile, and
 *     `new Worker` → the worker's 'started' message (what a container start
 *     costs once the module is compiled) for a cold and a warm pod.
 */
import { execFileSync } from 'node:child_process';
import { statSync } from 'node:fs';
import type { Clients } from '../lib/env.ts';
import { PodWatch } from '../lib/pod-watch.ts';
import { createNamespace, drainNamespace, podSpec } from '../lib/pods.ts';
import { median } from '../lib/stats.ts';
import { readTrace, workersOf } from '../lib/trace.ts';
import { nodeBinary } from '../../test/harness/node-binary.ts';

/** Module start of one module. */
export interface ModuleStart {
  module: string;
  bytes: number;
  isolation: { compileMs: number; instantiateMs: number; recompileMs: number };
  nodelet: { coldCompileMs?: number; coldWorkerStartMs?: number; warmWorkerStartMs?: number };
}

const r1 = (v: number | undefined) => (v === undefined || Number.isNaN(v) ? undefined : Math.round(v * 10) / 10);

/** Measures `path` in isolation (fresh processes). */
export function isolation(path: string): ModuleStart['isolation'] {
  const child = new URL('../lib/module-start-child.mjs', import.meta.url).pathname;
  const runs = [0, 1, 2].map(() => JSON.parse(execFileSync(nodeBinary(), ['--no-warnings', child, path], { encoding: 'utf8' }).trim()));
  const m = (k: string) => r1(median(runs.map((r) => r[k] as number)))!;
  return { compileMs: m('compileMs'), instantiateMs: m('instantiateMs'), recompileMs: m('recompileMs') };
}

/** Compile events of the trace whose byte count is within 1% of `bytes` (the capped module is a few bytes longer). */
function compilesOf(trace: ReturnType<typeof readTrace>, bytes: number): number[] {
  return trace.filter((e): e is Extract<typeof e, { ev: 'compile' }> => e.ev === 'compile' && Math.abs(e.bytes - bytes) <= bytes / 100).map((e) => e.ms);
}

/** Runs two pods of `image` one after the other on nodelet (the first compiles); reads the trace. */
export async function inNodelet(c: Clients, traceFile: string, name: string, image: string, path: string, args: string[]): Promise<ModuleStart['nodelet']> {
  const ns = `modstart-${name}`;
  await createNamespace(c, ns);
  const w = await PodWatch.start(c.kc, ns);
  try {
    for (const pod of ['cold', 'warm']) {
      await c.core.createNamespacedPod({ namespace: ns, body: { metadata: { name: pod }, spec: podSpec('nodelet', image, args) } });
      await w.until(`${ns}/${pod} Running`, () => w.pods.get(pod)?.running !== undefined, 180_000);
    }
    const trace = readTrace(traceFile);
    const bytes = statSync(path).size;
    return {
      coldCompileMs: r1(compilesOf(trace, bytes)[0]),
      coldWorkerStartMs: r1(workersOf(trace, ns, 'cold')[0]?.startMs),
      warmWorkerStartMs: r1(workersOf(trace, ns, 'warm')[0]?.startMs),
    };
  } finally {
    w.stop();
    await drainNamespace(c, ns);
  }
}
