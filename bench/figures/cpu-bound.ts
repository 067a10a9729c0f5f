/**
 * Figure 7, CPU-bound execution: bench/fixtures/cpu.c (no WASI calls in its
 * loop) run as a pod on nodelet (worker 'started' → exit, from the bench
 * trace) and by `wasmtime run` (wall time of the process, Cranelift compile
 * included), median of 3 each; plus plain node:wasi in a fresh process for
 * reference. wasmtime-cli is built with cargo into test/.cache/wasmtime on
 * request (`--with-wasmtime`).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Clients } from '../lib/env.ts';
import { ROOT } from '../lib/fixtures.ts';
import { PodWatch } from '../lib/pod-watch.ts';
import { createNamespace, drainNamespace, podSpec } from '../lib/pods.ts';
import { median, ratio } from '../lib/stats.ts';
import { exitOf, readTrace } from '../lib/trace.ts';
import { nodeBinary } from '../../test/harness/node-binary.ts';

const WASMTIME_ROOT = join(ROOT, 'test', '.cache', 'wasmtime');
/**
 * The wasmtime-cli version built: the newest that supports the machines' rustc 1.95 (50.x needs 1.97). 29.0.1 no longer compiles with it
 * (`wasmtime-wasi`: error[E0080] "assertion failed: 1 == <DirectoryEntry as ComponentType>::ALIGN32").
 */
export const WASMTIME_VERSION = '48.0.8';

/** Builds wasmtime-cli (cached); returns its path or why it could not. */
export function buildWasmtime(): { path: string } | { error: string } {
  const bin = join(WASMTIME_ROOT, 'bin', 'wasmtime');
  if (existsSync(bin)) return { path: bin };
  process.stdout.write(`building wasmtime-cli ${WASMTIME_VERSION} with cargo into ${WASMTIME_ROOT} (several minutes)...\n`);
  const r = spawnSync('cargo', ['install', 'wasmtime-cli', '--version', WASMTIME_VERSION, '--locked', '--root', WASMTIME_ROOT, '-j', '2'], {
    stdio: ['ignore', 'inherit', 'pipe'],
    encoding: 'utf8',
    timeout: 3_600_000,
  });
  if (r.status !== 0 || !existsSync(bin))
    return {
      error: `cargo install wasmtime-cli failed (${r.error?.message ?? `exit ${r.status}`}): ${(r.stderr ?? '').split('\n').filter(Boolean).slice(-5).join(' | ')}`,
    };
  return { path: bin };
}

/** Result of figure 7. */
export interface CpuBoundResult {
  rounds: number;
  nodeletMs: number[];
  nodeWasiMs: number;
  wasmtimeMs?: number;
  ratio?: number;
  skipped?: string;
}

/** Runs the CPU-bound module on nodelet `runs` times (and with wasmtime if given). */
export async function measureCpuBound(
  c: Clients,
  traceFile: string,
  image: string,
  wasmPath: string,
  rounds: number,
  wasmtime?: string,
): Promise<CpuBoundResult> {
  const ns = 'cpubound';
  await createNamespace(c, ns);
  const w = await PodWatch.start(c.kc, ns);
  const nodeletMs: number[] = [];
  try {
    for (let i = 0; i < 3; i++) {
      const name = `cpu-${i}`;
      await c.core.createNamespacedPod({
        namespace: ns,
        body: { metadata: { name }, spec: podSpec('nodelet', image, [String(rounds)], { restartPolicy: 'Never' }) },
      });
      await w.until(`${name} finished`, () => w.pods.get(name)?.finished !== undefined, 300_000);
      await new Promise((r) => setTimeout(r, 200));
      const e = exitOf(readTrace(traceFile), ns, name);
      if (e) nodeletMs.push(Math.round(e.runMs));
    }
  } finally {
    w.stop();
    await drainNamespace(c, ns);
  }
  const child = join(ROOT, 'bench', 'lib', 'run-wasi-child.mjs');
  const nodeWasiMs = Math.round(
    median(
      [0, 1, 2].map(() =>
        Number(
          execFileSync(nodeBinary(), ['--no-warnings', child, wasmPath, String(rounds)], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim(),
        ),
      ),
    ),
  );
  if (!wasmtime) return { rounds, nodeletMs, nodeWasiMs };
  const wt = [0, 1, 2].map(() => {
    const t = performance.now();
    execFileSync(wasmtime, ['run', wasmPath, String(rounds)], { stdio: 'ignore' });
    return performance.now() - t;
  });
  const wasmtimeMs = Math.round(median(wt));
  return { rounds, nodeletMs, nodeWasiMs, wasmtimeMs, ratio: ratio(median(nodeletMs), wasmtimeMs) };
}
