/**
 * Figure 10: `nodelet run <module>` against the same module run with plain node:wasi
 * (bench/lib/plain-wasi-run.mjs) on the same Node, one process each. Alternating runs —
 * `nodelet run`, the plain script, and `nodelet run` with NODE_DISABLE_COMPILE_CACHE
 * (neither Node's compile cache nor the module code cache), the order turned each round
 * (so that no side always follows the same one) — after two warm-up runs of each, which
 * fill nodelet's caches (in a fresh $XDG_CACHE_HOME). Each run is measured by
 * bench/lib/rusage.pl from wait4(2): wall time from fork to reaping, CPU (user + system) and
 * peak RSS of that child alone; the medians are the figure, with the ratios
 * nodelet/plain. Output goes to /dev/null; one more run of each, captured, checks that both
 * print the same stdout and exit alike.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { median, ratio } from '../lib/stats.ts';

/** wait4(2) by CPU (Linux's unistd tables: x86_64 61, the generic one of arm64 260). */
const WAIT4: Partial<Record<NodeJS.Architecture, number>> = { x64: 61, arm64: 260 };

/** What one run cost. */
export interface RunCost {
  readonly wallMs: number;
  readonly cpuMs: number;
  readonly maxRssMiB: number;
}

/** One module's figure: medians of each side, the ratios nodelet/plain, every sample. */
export interface CliRunCase {
  readonly module: string;
  readonly bytes: number;
  readonly args: readonly string[];
  readonly runs: number;
  readonly plain: RunCost;
  readonly nodelet: RunCost;
  readonly nodeletNoCache: RunCost;
  /** nodelet run / plain node:wasi, of the medians. */
  readonly ratios: { readonly wall: number; readonly cpu: number; readonly rss: number };
  readonly ratiosNoCache: { readonly wall: number; readonly cpu: number; readonly rss: number };
  /** Both printed the same stdout and ended with the same status. */
  readonly sameOutput: boolean;
  readonly samples: { readonly plain: RunCost[]; readonly nodelet: RunCost[]; readonly nodeletNoCache: RunCost[] };
}

/** The figure. */
export interface CliRunResult {
  readonly node: string;
  readonly loadAvg: { readonly before: number[]; readonly after: number[] };
  readonly cases: CliRunCase[];
}

const round = (v: number, d = 1) => Math.round(v * 10 ** d) / 10 ** d;

/** Runs `cmd` once under rusage.pl (its stdout and stderr to the files named). */
function measured(cmd: readonly string[], env: NodeJS.ProcessEnv, out = '/dev/null', err = '/dev/null'): RunCost & { status: number | null } {
  const nr = WAIT4[process.arch];
  if (nr === undefined) throw new Error(`no wait4(2) number for ${process.arch}`);
  const line = execFileSync('perl', [join(import.meta.dirname, '..', 'lib', 'rusage.pl'), String(nr), out, err, ...cmd], { encoding: 'utf8', env });
  const r = JSON.parse(line) as { status: number | null; wallUs: number; userUs: number; sysUs: number; maxRssKiB: number };
  return { status: r.status, wallMs: round(r.wallUs / 1000, 2), cpuMs: round((r.userUs + r.sysUs) / 1000, 2), maxRssMiB: round(r.maxRssKiB / 1024, 2) };
}

const medians = (xs: RunCost[]): RunCost => ({
  wallMs: round(median(xs.map((x) => x.wallMs))),
  cpuMs: round(median(xs.map((x) => x.cpuMs))),
  maxRssMiB: round(median(xs.map((x) => x.maxRssMiB))),
});
const ratios = (a: RunCost, b: RunCost) => ({ wall: ratio(a.wallMs, b.wallMs), cpu: ratio(a.cpuMs, b.cpuMs), rss: ratio(a.maxRssMiB, b.maxRssMiB) });

/**
 * Measures `modules` (name, path, args), `runs` alternating runs of each side per module,
 * with `node` (the Node 24 binary) and nodelet's `bin` (bin/nodelet.mjs on the built dist/).
 */
export function measureCliRun(node: string, bin: string, modules: ReadonlyArray<{ name: string; path: string; args: string[] }>, runs: number): CliRunResult {
  const before = loadavg();
  const cases: CliRunCase[] = [];
  for (const m of modules) {
    const cacheHome = mkdtempSync(join(tmpdir(), 'nodelet-bench-cli-run-'));
    try {
      const env = { ...process.env, XDG_CACHE_HOME: cacheHome };
      const sides = {
        nodelet: { cmd: [node, bin, 'run', m.path, ...m.args], env },
        plain: { cmd: [node, join(import.meta.dirname, '..', 'lib', 'plain-wasi-run.mjs'), m.path, ...m.args], env },
        nodeletNoCache: { cmd: [node, bin, 'run', m.path, ...m.args], env: { ...env, NODE_DISABLE_COMPILE_CACHE: '1' } },
      } as const;
      const order = ['nodelet', 'plain', 'nodeletNoCache'] as const;
      for (let i = 0; i < 2; i++) for (const s of order) measured(sides[s].cmd, sides[s].env);
      const samples = { nodelet: [] as RunCost[], plain: [] as RunCost[], nodeletNoCache: [] as RunCost[] };
      for (let i = 0; i < runs; i++)
        for (const s of [...order.slice(i % order.length), ...order.slice(0, i % order.length)]) {
          const { status, ...cost } = measured(sides[s].cmd, sides[s].env);
          if (status !== 0) throw new Error(`${sides[s].cmd.join(' ')} exited ${status}`);
          samples[s].push(cost);
        }
      const outputs = (['nodelet', 'plain'] as const).map((s) => {
        const out = join(cacheHome, `${s}.out`);
        const { status } = measured(sides[s].cmd, sides[s].env, out);
        return { status, stdout: readFileSync(out, 'utf8') };
      });
      const [n, p, nc] = [medians(samples.nodelet), medians(samples.plain), medians(samples.nodeletNoCache)];
      cases.push({
        module: m.name,
        bytes: statSync(m.path).size,
        args: m.args,
        runs,
        plain: p,
        nodelet: n,
        nodeletNoCache: nc,
        ratios: ratios(n, p),
        ratiosNoCache: ratios(nc, p),
        sameOutput: outputs[0]!.status === outputs[1]!.status && outputs[0]!.stdout === outputs[1]!.stdout,
        samples,
      });
    } finally {
      rmSync(cacheHome, { recursive: true, force: true });
    }
  }
  return { node: execFileSync(node, ['--version'], { encoding: 'utf8' }).trim(), loadAvg: { before, after: loadavg() }, cases };
}
