/**
 * `npm run bench [-- --quick] [-- --with-wasmtime] [-- --profile]`: starts the
 * real control plane, a registry, nodelet (real binary), kwok and kubemark's
 * hollow node (the upstream kubelet, fake runtime) on the same control plane, measures the figures of bench/README.md, prints a table and
 * writes bench/results.json (and a copy as results-quick.json / results-full.json).
 *   --quick          fewer pods, shorter windows (under 5 minutes)
 *   --with-wasmtime  build wasmtime-cli with cargo (cached) for figure 7 (`wasmtime run`) and figure 8 (`wasmtime serve`)
 *   --profile        run nodelet with --cpu-prof/--heap-prof into bench/.profiles/ and summarize them
 *   --perf-map       run nodelet with --perf-basic-prof (JS frames for Linux `perf record -g -p <nodelet pid>`,
 *                    an on-CPU profile of every thread; bench/README.md)
 *   --density-steps=100,500,1000  sizes of the density Deployment (default 100,250,500; quick 100)
 *   --only=a,b       only these figures (latency,kwok,hollow,scale,density,footprint,modules,logs,plugins,dra,cpu,http,probes,cli-run,fleet);
 *                    `fleet` runs alone: N nodelets vs N hollow nodes vs N kwok nodes (bench/fleet.ts), `--nodes N[,M]`
 *                    (default 10,50), writes bench/results/fleet.json;
 *                    `cli-run` (`nodelet run` against plain node:wasi) needs no cluster: alone, it runs without one and
 *                    writes bench/results/cli-run.json;
 *                    `hollow` runs the latency figure on nodelet, kwok and the hollow node, with API calls per pod;
 *                    `scale` scales a Deployment 0 → 500 (quick: 100) on nodelet and on the hollow node
 *   --scale-pods=N   the replicas of the scale figure (default 500, quick 100)
 *   --single-pods=N  the single pods of the latency figure, one after another (default 20, quick 10): more for a steadier median
 *   --burst-rounds=N the 100-pod bursts per node (default 3), interleaved between the nodes; the nodes are compared by their
 *                    median round (figures/latency.ts)
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildWasmModule } from '../test/harness/wasm-modules.ts';
import { buildComponent } from '../test/harness/wasm-components.ts';
import { buildPeers } from '../test/peers/build-peers.ts';
import { ensureBuilt } from '../test/harness/build-dist.ts';
import { nodeBinary } from '../test/harness/node-binary.ts';
import {
  clientsFor,
  disposeRoot,
  NODELET_NODE,
  startBenchHollowNode,
  startBenchNodelet,
  benchDataBase,
  startBenchRegistry,
  startCluster,
  startKwok,
  waitNodeReady,
} from './lib/env.ts';
import { perPod, scrapeRequestTotals, scrapeServerTimes, serverMsPerCall, settledRequestTotals, type ApiCallsPerPod } from './lib/api-calls.ts';
import type { Target } from './lib/pods.ts';
import { buildBenchC, buildBigGo, ROOT } from './lib/fixtures.ts';
import { machine, mib, sampleTree, treeMemory, treesCpuSeconds } from './lib/proc.ts';
import { summarizeProfiles } from './lib/cpu-profile.ts';
import { mainThreadMemory } from './lib/trace.ts';
import { atLeast, atMost, printTable, type Row, type TargetCheck } from './lib/report.ts';
import { ratio } from './lib/stats.ts';
import { cpuCell, measureBurst, measureLatency, medianRound, type CpuProbe, type LatencyResult } from './figures/latency.ts';
import { measureDensity, type DensityResult } from './figures/density.ts';
import { inNodelet, isolation, type ModuleStart } from './figures/module-start.ts';
import { measureLogs, type LogsResult } from './figures/logs.ts';
import { measurePlugins, type PluginsResult } from './figures/plugins.ts';
import { measureDra, type DraResult } from './figures/dra.ts';
import { buildWasmtime, measureCpuBound, type CpuBoundResult } from './figures/cpu-bound.ts';
import { measureHttpComponent, type HttpComponentResult } from './figures/http-component.ts';
import { measureInstantiation, type InstantiationResult } from './figures/component-instantiation.ts';
import { measureProbes, type ProbesResult } from './figures/probes.ts';
import { measureScale, type ScaleResult } from './figures/scale.ts';
import { measureCliRun, type CliRunResult } from './figures/cli-run.ts';
import { runFleet } from './fleet.ts';

const argv = process.argv.slice(2);
const quick = argv.includes('--quick');
const perfMap = argv.includes('--perf-map');
const withWasmtime = argv.includes('--with-wasmtime');
const profile = argv.includes('--profile');
const only = argv
  .find((a) => a.startsWith('--only='))
  ?.slice(7)
  .split(',');
const want = (f: string) => !only || only.includes(f);
const scalePodsArg = Number(argv.find((a) => a.startsWith('--scale-pods='))?.slice(13));

const P = quick
  ? { single: 10, burst: 100, steps: [100], settleMs: 5_000, idleMs: 15_000, cpuWindowMs: 15_000, logMb: 50, cpuRounds: 150, httpS: 10 }
  : { single: 20, burst: 100, steps: [100, 250, 500], settleMs: 10_000, idleMs: 60_000, cpuWindowMs: 60_000, logMb: 200, cpuRounds: 300, httpS: 10 };
// --density-steps=100,500,1000: the density Deployment's sizes instead of the defaults above.
const densitySteps = argv
  .find((a) => a.startsWith('--density-steps='))
  ?.slice(16)
  .split(',')
  .map(Number);
if (densitySteps) P.steps = densitySteps;
const singlePods = Number(argv.find((a) => a.startsWith('--single-pods='))?.slice(14));
const burstRoundsArg = Number(argv.find((a) => a.startsWith('--burst-rounds='))?.slice(15));
const burstRounds = Number.isInteger(burstRoundsArg) && burstRoundsArg > 0 ? burstRoundsArg : 3;
if (Number.isInteger(singlePods) && singlePods > 0) P.single = singlePods;

const t0 = Date.now();
const phases: Record<string, number> = {};
async function phase<T>(name: string, fn: () => Promise<T>): Promise<T | { error: string }> {
  const t = Date.now();
  console.log(`[bench ${((t - t0) / 1000).toFixed(0)}s] ${name}...`);
  try {
    return await fn();
  } catch (e) {
    console.log(`  ${name} failed: ${(e as Error).stack ?? String(e)}`);
    return { error: String((e as Error).message ?? e) };
  } finally {
    phases[name] = Math.round((Date.now() - t) / 1000);
  }
}
const ok = <T extends object>(r: T | { error: string } | undefined): T | undefined => (r && !('error' in r) ? r : undefined);

// The fleet figure runs alone, on a control plane of its own (bench/fleet.ts).
if (only?.includes('fleet')) {
  if (only.length > 1) throw new Error('--only=fleet runs alone: run the other figures without it');
  await runFleet(argv);
  process.exit(0);
}

// Figure 10 needs no cluster: `--only=cli-run` runs it alone (no control plane, registry or peers).
if (only && only.every((f) => f === 'cli-run')) {
  ensureBuilt();
  const big = await buildBigGo().catch((e: unknown) => {
    console.log(`  the big Go module is not built (${String(e)}): hello.wasm only`);
    return undefined;
  });
  const r = await phase('nodelet run vs plain node:wasi', () => cliRunFigure(big));
  const rows: Row[] = [];
  const targets: TargetCheck[] = [];
  if (!('error' in r)) cliRunRows(r, (figure, value, t) => (rows.push({ figure, value, target: t?.target, met: t?.met ?? undefined }), t && targets.push(t)));
  printTable(rows);
  const file = join(ROOT, 'bench', 'results', 'cli-run.json');
  writeFileSync(
    file,
    `${JSON.stringify({ date: new Date().toISOString(), mode: quick ? 'quick' : 'full', machine: machine(), figures: { cliRun: r }, targets }, null, 2)}\n`,
  );
  console.log(`\nwrote ${file}`);
  process.exit(0);
}

// Build everything first (cached after the first run).
console.log(`[bench] ${quick ? 'quick' : 'full'} run on ${JSON.stringify(machine())}, nodes' data under ${benchDataBase()}`);
const paths = {
  sleep: await buildWasmModule('sleep'),
  spew: await buildBenchC('spew'),
  cpu: await buildBenchC('cpu'),
  big: await buildBigGo(),
  // figure 8: the wasi:http hello component (cargo wasm32-wasip2, cached)
  'hello-http': await buildComponent('hello-http'),
};
buildPeers();
ensureBuilt(); // nodelet runs from dist/
const help = measureHelp();
console.log(`  nodelet --help: median ${help.medianMs} ms of ${help.runsMs.join(', ')} ms`);
let wasmtime: string | undefined;
let wasmtimeSkip: string | undefined = 'not requested (pass --with-wasmtime to build wasmtime-cli with cargo)';
if (withWasmtime) {
  const b = buildWasmtime();
  if ('path' in b) {
    wasmtime = b.path;
    wasmtimeSkip = undefined;
  } else {
    wasmtimeSkip = b.error;
    console.log(`  wasmtime: ${b.error}`);
  }
} else console.log(`  figures 7 and 8 (wasmtime) skipped: ${wasmtimeSkip}`);

// Figure 10 before the cluster starts: two cores shared with a control plane make one-shot processes noisy.
const cliRun = want('cli-run') ? await phase('nodelet run vs plain node:wasi', () => cliRunFigure(paths.big)) : undefined;

const cleanups: Array<() => Promise<unknown> | void> = [];
const cleanup = async () => {
  for (const f of cleanups.splice(0).reverse())
    await Promise.resolve()
      .then(f)
      .catch((e) => console.log(`cleanup: ${String(e)}`));
};
process.once('SIGINT', () => {
  void cleanup().then(() => process.exit(130));
});
const profDir = join(ROOT, 'bench', '.profiles', new Date().toISOString().replace(/[:.]/g, '-'));
const results: Record<string, unknown> = {};
try {
  const cluster = await startCluster();
  cleanups.push(() => cluster.stop());
  const c = clientsFor(cluster.info);
  const { reg, images } = await startBenchRegistry(paths);
  cleanups.push(() => reg.stop());
  if (profile) mkdirSync(profDir, { recursive: true });
  const nodelet = await startBenchNodelet(cluster.info, {
    maxPods: Math.max(600, ...P.steps.map((n) => n + 50)), // the density steps fit (--density-steps)
    nodeOptions: perfMap
      ? ['--perf-basic-prof', '--interpreted-frames-native-stack']
      : profile
        ? ['--cpu-prof', `--cpu-prof-dir=${profDir}`, '--heap-prof', `--heap-prof-dir=${profDir}`]
        : [],
  });
  cleanups.push(
    () => disposeRoot(nodelet.rootDir),
    () => nodelet.stop(),
  );
  const kwok = await startKwok(cluster.info, c, 600);
  cleanups.push(() => kwok.stop());
  const hollow =
    want('hollow') || want('scale')
      ? await startBenchHollowNode(cluster.info, 600).catch((e) => {
          console.log(`  hollow node not started: ${String(e)}`);
          return undefined;
        })
      : undefined;
  if (hollow) cleanups.push(() => hollow.stop());
  await Promise.race([
    waitNodeReady(c, NODELET_NODE),
    nodelet.exited.then((code) => {
      throw new Error(`nodelet exited (${code}) before its node was Ready; log tail:\n${nodelet.logTail(30)}`);
    }),
  ]);
  void nodelet.exited.then((code) => console.log(`!! nodelet exited (${code}) during the bench; log tail:\n${nodelet.logTail(30)}`));
  const setupS = Math.round((Date.now() - t0) / 1000);
  console.log(`[bench] setup took ${setupS}s (nodelet pid ${nodelet.pid}, log ${nodelet.logFile})`);

  const idle = await phase('footprint (idle)', async () => {
    await new Promise((r) => setTimeout(r, 5_000));
    const s = await sampleTree(nodelet.pid, P.idleMs);
    const mainThread = await mainThreadMemory(nodelet.pid, nodelet.traceFile);
    return {
      cores: Math.round(s.cores * 10000) / 10000,
      windowS: Math.round(s.seconds),
      rssMiB: mib(s.memory.rss),
      maxRssMiB: mib(s.maxRss),
      pssMiB: s.memory.pss === undefined ? undefined : mib(s.memory.pss),
      pids: s.memory.pids,
      threads: s.memory.threads,
      byProcess: s.memory.byProcess,
      mainThread,
      memory: s.memory,
    };
  });
  const idleMem = ok(idle)?.memory ?? treeMemory(nodelet.pid);
  // API calls per pod: apiserver_request_total diffed around each node's latency phase (run one after another).
  const apiCalls: Partial<Record<Target, ApiCallsPerPod>> = {};
  // CPU during each burst round: the node under test, the control plane its calls go to, and the bench.
  const nodePids: Record<Target, number | undefined> = { nodelet: nodelet.pid, kwok: kwok.peer.proc.pid, hollow: hollow?.peer.proc.pid };
  const controlPlane = ['kube-apiserver', 'etcd', 'kube-scheduler', 'kube-controller-manager'] as const;
  const cpuProbe = (target: Target): CpuProbe => {
    const watched: [string, number | undefined][] = [
      [target, nodePids[target]],
      ...controlPlane.map((n): [string, number | undefined] => [n, cluster.info.pids[n]]),
    ];
    const roots = Object.fromEntries(watched.filter((e): e is [string, number] => !!e[1]));
    // The bench itself too: it makes the pods and watches them on the same cores.
    return () => {
      const u = process.cpuUsage();
      return { ...treesCpuSeconds(roots), bench: (u.user + u.system) / 1e6 };
    };
  };

  const latencyWithCalls = async (target: Target, image: string) => {
    const before = scrapeRequestTotals(cluster.info);
    const timesBefore = scrapeServerTimes(cluster.info);
    const r = await measureLatency(c, target, image, { ...P, cpu: cpuProbe(target) });
    // Settled: calls a node still makes after its pods are gone (queued events) are its own, not the next phase's.
    apiCalls[target] = {
      ...perPod(before, await settledRequestTotals(cluster.info), P.single + P.burst),
      serverMs: serverMsPerCall(timesBefore, scrapeServerTimes(cluster.info)),
    };
    return r;
  };
  const lat = want('latency') || want('hollow') ? await phase('latency (nodelet)', () => latencyWithCalls('nodelet', images.sleep!)) : undefined;
  const latK =
    want('kwok') || want('latency') || want('hollow')
      ? await phase('latency (kwok)', () => latencyWithCalls('kwok', 'registry.invalid/kwok-fake:1'))
      : undefined;
  const latH = hollow ? await phase('latency (hollow node)', () => latencyWithCalls('hollow', 'registry.invalid/hollow-fake:1')) : undefined;
  // More burst rounds, interleaved between the nodes (the order turned each round), after the counted phases;
  // each one's API calls settle before the next.
  const measured = [
    [ok(lat), images.sleep!],
    [ok(latK), 'registry.invalid/kwok-fake:1'],
    [ok(latH), 'registry.invalid/hollow-fake:1'],
  ].filter((x): x is [LatencyResult, string] => x[0] !== undefined);
  if (burstRounds > 1 && measured.length > 0)
    await phase(`burst rounds 2..${burstRounds} (${measured.map(([l]) => l.target).join(', ')}, interleaved)`, async () => {
      for (let round = 1; round < burstRounds; round++)
        for (let i = 0; i < measured.length; i++) {
          const [l, image] = measured[(i + round) % measured.length]!;
          l.rounds.push(await measureBurst(c, l.target, image, P.burst, cpuProbe(l.target)));
          // A node's events queued behind its burst go out before the next node's round, as between the counted phases.
          await settledRequestTotals(cluster.info);
          l.burst = medianRound(l.rounds);
        }
    });
  const scalePods = Number.isInteger(scalePodsArg) && scalePodsArg > 0 ? scalePodsArg : quick ? 100 : 500;
  const scale = want('scale')
    ? await phase(`scale 0 → ${scalePods} (nodelet, hollow node)`, async () => {
        const out: ScaleResult[] = [await measureScale(c, 'nodelet', images.sleep!, scalePods, nodelet.pid)];
        if (hollow) out.push(await measureScale(c, 'hollow', 'registry.invalid/hollow-fake:1', scalePods));
        return out;
      })
    : undefined;
  const dens = want('density')
    ? await phase('density + footprint at 100 pods + replicas', () =>
        measureDensity(c, nodelet.pid, nodelet.traceFile, images.sleep!, idleMem, { steps: P.steps, settleMs: P.settleMs, cpuWindowMs: P.cpuWindowMs }),
      )
    : undefined;
  const mods = want('modules')
    ? await phase('module start', async () => {
        const out: ModuleStart[] = [];
        for (const [name, args] of [
          ['sleep', ['1000000']],
          ['big', ['1000000']],
        ] as const) {
          const path = paths[name];
          out.push({
            module: name,
            bytes: (await import('node:fs')).statSync(path).size,
            isolation: isolation(path),
            nodelet: await inNodelet(c, nodelet.traceFile, name, images[name]!, path, [...args]),
          });
        }
        return out;
      })
    : undefined;
  const logs = want('logs') ? await phase('logs', () => measureLogs(c, cluster.info, nodelet.traceFile, images.spew!, P.logMb)) : undefined;
  const plugins = want('plugins') ? await phase('plugins', () => measurePlugins(c, nodelet.rootDir)) : undefined;
  const dra = want('plugins') || want('dra') ? await phase('dra', () => measureDra(c, cluster.info, nodelet.rootDir, images.sleep!)) : undefined;
  const probes = want('probes')
    ? await phase('probes: 100 pods with a 1 s readiness probe', () =>
        measureProbes(c, nodelet.pid, images.sleep!, { pods: 100, settleMs: P.settleMs, cpuWindowMs: P.cpuWindowMs }),
      )
    : undefined;
  const cpu = want('cpu') ? await phase('cpu-bound', () => measureCpuBound(c, nodelet.traceFile, images.cpu!, paths.cpu, P.cpuRounds, wasmtime)) : undefined;

  const http = want('http')
    ? await phase('wasi:http component', () =>
        measureHttpComponent(
          c,
          images['hello-http']!,
          P.httpS,
          wasmtime ? { path: wasmtime, componentPath: paths['hello-http'] } : { skipped: wasmtimeSkip ?? 'wasmtime-cli not built' },
        ),
      )
    : undefined;
  const instantiation = want('http')
    ? await phase('wasi:http component instantiation', () => measureInstantiation(paths['hello-http'], quick ? 1000 : 3000))
    : undefined;

  Object.assign(results, { idle, lat, latK, latH, apiCalls, scale, dens, mods, logs, plugins, dra, cpu, http, instantiation, probes, cliRun });
  report({
    idle: ok(idle),
    lat: ok(lat),
    latK: ok(latK),
    latH: ok(latH),
    apiCalls,
    scale: ok(scale as never) as ScaleResult[] | undefined,
    dens: ok(dens),
    mods: ok(mods as never) as ModuleStart[] | undefined,
    logs: ok(logs),
    plugins: ok(plugins),
    dra: ok(dra),
    cpu: ok(cpu),
    http: ok(http),
    instantiation: ok(instantiation),
    probes: ok(probes),
    cliRun: ok(cliRun),
  });
} finally {
  await cleanup();
  if (profile) console.log(summarizeProfiles(profDir));
}

/** Figure 10 on hello.wasm and, when built, the big Go module (bench/figures/cli-run.ts). */
function cliRunFigure(big: string | undefined): Promise<CliRunResult> {
  return buildWasmModule('hello').then((hello) =>
    measureCliRun(
      nodeBinary(),
      join(ROOT, 'bin', 'nodelet.mjs'),
      [{ name: 'hello.wasm', path: hello, args: ['one', 'two'] }, ...(big ? [{ name: 'big Go module', path: big, args: ['0'] }] : [])],
      quick ? 11 : 21,
    ),
  );
}

/** Figure 10's rows; the targets apply to hello.wasm (nodelet run over plain node:wasi: wall ≤ 1.5×, CPU ≤ 2×, peak RSS ≤ 1.3×). */
function cliRunRows(r: CliRunResult, add: (figure: string, value: string, t?: TargetCheck) => void): void {
  const cost = (c: { wallMs: number; cpuMs: number; maxRssMiB: number }) => `${c.wallMs} ms wall, ${c.cpuMs} ms CPU, ${c.maxRssMiB} MiB`;
  for (const c of r.cases) {
    const hello = c.module === 'hello.wasm';
    const kib = Math.round(c.bytes / 1024);
    add(`10 nodelet run ${c.module} (${kib} KiB), median of ${c.runs}`, cost(c.nodelet));
    add(`10 plain node:wasi, same module`, cost(c.plain));
    add(`10 nodelet run without caches (NODE_DISABLE_COMPILE_CACHE)`, cost(c.nodeletNoCache));
    add(
      `10 nodelet run/plain: wall`,
      `${c.ratios.wall}x (without caches ${c.ratiosNoCache.wall}x)`,
      hello ? atMost('nodelet run wall vs node:wasi', c.ratios.wall, 1.5, 'x') : undefined,
    );
    add(
      `10 nodelet run/plain: CPU`,
      `${c.ratios.cpu}x (without caches ${c.ratiosNoCache.cpu}x)`,
      hello ? atMost('nodelet run CPU vs node:wasi', c.ratios.cpu, 2, 'x') : undefined,
    );
    add(
      `10 nodelet run/plain: peak RSS`,
      `${c.ratios.rss}x (without caches ${c.ratiosNoCache.rss}x)`,
      hello ? atMost('nodelet run peak RSS vs node:wasi', c.ratios.rss, 1.3, 'x') : undefined,
    );
    if (!c.sameOutput) add(`10 ${c.module}: nodelet run and node:wasi printed different output or exited differently`, 'MISMATCH');
  }
}

/** `nodelet --help` wall time (spawn to exit) on Node 24, 7 runs after one warm-up; the median is the figure. */
function measureHelp(): { medianMs: number; runsMs: number[] } {
  const bin = join(ROOT, 'bin', 'nodelet.mjs');
  const once = () => {
    const t = performance.now();
    execFileSync(nodeBinary(), [bin, '--help'], { stdio: 'ignore' });
    return Math.round(performance.now() - t);
  };
  once();
  const runsMs = Array.from({ length: 7 }, once);
  return { medianMs: [...runsMs].sort((a, b) => a - b)[3]!, runsMs };
}

function report(r: {
  idle?: { cores: number; rssMiB: number; pssMiB?: number; windowS: number };
  lat?: LatencyResult;
  latK?: LatencyResult;
  latH?: LatencyResult;
  apiCalls: Partial<Record<Target, ApiCallsPerPod>>;
  scale?: ScaleResult[];
  dens?: DensityResult;
  mods?: ModuleStart[];
  logs?: LogsResult;
  plugins?: PluginsResult;
  dra?: DraResult;
  cpu?: CpuBoundResult;
  http?: HttpComponentResult;
  instantiation?: InstantiationResult;
  probes?: ProbesResult;
  cliRun?: CliRunResult;
}): void {
  const rows: Row[] = [];
  const targets: TargetCheck[] = [];
  const add = (figure: string, value: string, t?: TargetCheck) => {
    rows.push({ figure, value, target: t?.target, met: t?.met ?? undefined });
    if (t) targets.push(t);
  };
  const na = 'n/a';
  for (const l of [r.lat, r.latK, r.latH]) {
    if (!l) continue;
    const single = l.target === 'nodelet' ? atMost('single pod median', l.single.medianMs, 300, 'ms') : undefined;
    add(
      `1 ${l.target} single pod median (${l.single.n}) [create call→Running]`,
      `${l.single.medianMs} ms (from creationTimestamp: ${l.single.medianSigMs} ms)`,
      single,
    );
    const b = l.burst.headline;
    const p99 = l.target === 'nodelet' ? atMost('100-pod burst p99', b.p99, 2000, 'ms') : undefined;
    const of = l.rounds.length > 1 ? `, the median of ${l.rounds.length} rounds by p99` : '';
    add(
      `1 ${l.target} burst of ${l.burst.n} p50/p90/p99${of}`,
      `${b.p50}/${b.p90}/${b.p99} ms (creationTimestamp: ${l.burst.sig.p50}/${l.burst.sig.p90}/${l.burst.sig.p99}); all Running ${l.burst.allRunningMs} ms`,
      p99,
    );
    if (l.rounds.length > 1) add(`1 ${l.target} burst p99 of each round`, `${l.rounds.map((x) => x.headline.p99).join(', ')} ms`);
    const fb = l.burst.fromBound;
    add(`1 ${l.target} burst p50/p90/p99 from bound (watch)`, `${fb.p50}/${fb.p90}/${fb.p99} ms (${fb.n} pods seen bound before Running)`);
    if (l.burst.cpu) add(`1 ${l.target} burst CPU (s), its median round`, cpuCell(l.burst.cpu));
  }
  if (r.lat && r.latK) {
    const rb = ratio(r.lat.burst.headline.p99, r.latK.burst.headline.p99);
    add(
      '1 ratio nodelet/kwok burst p99',
      `${rb}x (p50 ${ratio(r.lat.burst.headline.p50, r.latK.burst.headline.p50)}x)`,
      atMost('burst p99 vs kwok', rb, 2, 'x'),
    );
    add('1 ratio nodelet/kwok single median', `${ratio(r.lat.single.medianMs, r.latK.single.medianMs)}x`);
  }
  if (r.lat && r.latH) {
    add(
      '1 ratio nodelet/hollow-node burst p99',
      `${ratio(r.lat.burst.headline.p99, r.latH.burst.headline.p99)}x (p50 ${ratio(r.lat.burst.headline.p50, r.latH.burst.headline.p50)}x)`,
    );
    add('1 ratio nodelet/hollow-node single median', `${ratio(r.lat.single.medianMs, r.latH.single.medianMs)}x`);
  }
  for (const [target, a] of Object.entries(r.apiCalls)) {
    add(
      `1 ${target} API calls per pod (kubelet side, ${a.pods} pods)`,
      `${a.nodeSideTotal}: ${Object.entries(a.nodeSide)
        .map(([k, v]) => `${k} ${v}`)
        .join(', ')}; refused (count): ${
        Object.entries(a.refused)
          .map(([k, v]) => `${k} ×${v}`)
          .join(', ') || 'none'
      }`,
    );
    if (a.serverMs && Object.keys(a.serverMs).length > 0)
      add(
        `1 ${target} apiserver time per kubelet-side call`,
        Object.entries(a.serverMs)
          .sort((x, y) => y[1] - x[1])
          .map(([k, v]) => `${k} ${v} ms`)
          .join(', '),
      );
  }
  // The burst and start targets. kubemark's hollow kubelet records events into a FakeRecorder (dropped, never
  // posted), so "no more calls than the hollow node" is also shown without events (bench/README.md).
  if (r.lat && r.latK && r.latH) {
    const vsKwok = ratio(r.lat.burst.headline.p99, r.latK.burst.headline.p99);
    const vsHollow = ratio(r.lat.burst.headline.p99, r.latH.burst.headline.p99);
    add('1 target: burst p99 nodelet/kwok', `${vsKwok}x`, atMost('burst p99 vs kwok', vsKwok, 1.5, 'x'));
    add('1 target: burst p99 nodelet/hollow node', `${vsHollow}x`, atMost('burst p99 vs hollow node', vsHollow, 1.0, 'x'));
  }
  if (r.lat) add('1 target: single pod median ≤ 50 ms', `${r.lat.single.medianMs} ms`, atMost('single pod median', r.lat.single.medianMs, 50, 'ms'));
  const an = r.apiCalls.nodelet;
  const ah = r.apiCalls.hollow;
  if (an && ah) {
    const noEvents = (a: ApiCallsPerPod) => Math.round(Object.entries(a.nodeSide).reduce((t, [k, v]) => (/events$/.test(k) ? t : t + v), 0) * 100) / 100;
    add(
      '1 target: API calls per pod nodelet vs hollow node',
      `${an.nodeSideTotal} vs ${ah.nodeSideTotal}; without events ${noEvents(an)} vs ${noEvents(ah)} (the hollow kubelet's events go to a FakeRecorder)`,
      atMost('API calls per pod (without events) vs hollow node', Math.round((noEvents(an) - noEvents(ah)) * 100) / 100, 0, 'calls'),
    );
  }
  for (const sc of r.scale ?? []) {
    const n = sc.nodelet;
    add(
      `1 scale 0 → ${sc.pods} on ${sc.target}`,
      `all Running ${sc.allRunningMs} ms; p50/p90/p99 ${sc.latency.p50}/${sc.latency.p90}/${sc.latency.p99} ms` +
        (n ? `; nodelet ${n.cores} cores, max RSS ${n.maxRssMiB} MiB (${n.rssAtEndMiB} MiB at the end)` : ''),
    );
  }
  const sn = r.scale?.find((x) => x.target === 'nodelet');
  const sh = r.scale?.find((x) => x.target === 'hollow');
  if (sn && sh)
    add(
      `1 target: ${sn.pods} pods all Running nodelet/hollow ≤ 1.2x`,
      `${ratio(sn.allRunningMs, sh.allRunningMs)}x`,
      atMost('scale all Running vs hollow node', ratio(sn.allRunningMs, sh.allRunningMs), 1.2, 'x'),
    );
  add('0 nodelet --help (median of 7)', `${help.medianMs} ms (${help.runsMs.join(', ')})`, atMost('--help', help.medianMs, 200, 'ms'));
  if (r.idle) {
    add(`3 idle RSS (tree, ${r.idle.windowS}s)`, `${r.idle.rssMiB} MiB (PSS ${r.idle.pssMiB ?? na} MiB)`, atMost('idle RSS', r.idle.rssMiB, 100, 'MiB'));
    add('3 idle CPU', `${r.idle.cores} cores`, atMost('idle CPU', r.idle.cores, 0.02, 'cores'));
    const bp = (r.idle as { byProcess?: Array<{ comm: string; rssMiB: number }> }).byProcess;
    const mt = (r.idle as { mainThread?: { heapUsedMiB: number; heapTotalMiB: number; externalMiB: number } }).mainThread;
    if (bp)
      add(
        '3 idle RSS by process',
        bp.map((p) => `${p.comm} ${p.rssMiB}`).join(', ') +
          (mt ? `; main heap used/total ${mt.heapUsedMiB}/${mt.heapTotalMiB} MiB, external ${mt.externalMiB} MiB` : ''),
      );
  }
  if (r.dens?.at100)
    add(`3 at 100 pods (${r.dens.at100.windowS}s)`, `${r.dens.at100.cores} cores, RSS ${r.dens.at100.rssMiB} MiB, PSS ${r.dens.at100.pssMiB ?? na} MiB`);
  for (const s of r.dens?.steps ?? []) {
    const last = s === r.dens!.steps.at(-1);
    const per = s.pssTotalPerPodMiB ?? s.rssTotalPerPodMiB;
    add(
      `2 density ${s.pods} pods (all Running in ${Math.round(s.allRunningMs / 1000)} s)`,
      `tree RSS ${s.rssMiB} MiB, PSS ${s.pssMiB ?? na} MiB; per pod total ${s.rssTotalPerPodMiB}/${s.pssTotalPerPodMiB ?? na} MiB (RSS/PSS), over idle ${s.rssPerPodMiB}/${s.pssPerPodMiB ?? na}`,
      last ? atMost(`${s.pods} sleeping pods, tree PSS per pod`, per, 8, 'MiB') : undefined,
    );
  }
  if (r.dens)
    add(
      '4 Deployment replica module start (worker→started) 1st / 100th / median',
      `${r.dens.replicas.firstStartMs ?? na} / ${r.dens.replicas.hundredthStartMs ?? na} / ${r.dens.replicas.medianStartMs ?? na} ms`,
      atMost('100th replica module start', r.dens.replicas.hundredthStartMs, 10, 'ms'),
    );
  for (const m of r.mods ?? []) {
    add(
      `4 ${m.module} (${(m.bytes / 1e6).toFixed(2)} MB) isolation: compile / instantiate / recompile`,
      `${m.isolation.compileMs} / ${m.isolation.instantiateMs} / ${m.isolation.recompileMs} ms`,
    );
    add(
      `4 ${m.module} in nodelet: cold compile / cold start / warm start`,
      `${m.nodelet.coldCompileMs ?? na} / ${m.nodelet.coldWorkerStartMs ?? na} / ${m.nodelet.warmWorkerStartMs ?? na} ms`,
    );
  }
  if (r.logs) {
    add(
      `5 logs ${r.logs.mb} MB to stdout`,
      `${r.logs.mbPerS ?? na} MB/s (${r.logs.runMs ?? na} ms; status timestamps: ${r.logs.statusMbPerS ?? na} MB/s) ${r.logs.phase}`,
    );
    add('5 kubectl logs --tail=1000', `${r.logs.tail1000Ms} ms (${r.logs.tailLines} lines, last "${r.logs.tailLastLine}")`);
  }
  if (r.plugins) {
    const f = (p: PluginsResult['csi']) => ('ms' in p ? `${p.ms} ms` : `not available: ${p.notAvailable}`);
    add('6 CSI socket → CSINode updated', f(r.plugins.csi));
    add('6 device plugin socket → capacity in apiserver', f(r.plugins.devicePlugin));
  }
  if (r.dra) {
    const f = (p: PluginsResult['csi']) => ('ms' in p ? `${p.ms} ms` : `not available: ${p.notAvailable}`);
    add('6 DRA registration socket → ResourceSlice visible', f(r.dra.registration));
    add('6 DRA claim allocated → pod Running', f(r.dra.claimToRunning));
  }
  if (r.cpu)
    add(
      `7 CPU-bound (${r.cpu.rounds} rounds) nodelet / node:wasi / wasmtime`,
      `${r.cpu.nodeletMs.join(',')} / ${r.cpu.nodeWasiMs} / ${r.cpu.wasmtimeMs ?? `skipped: ${wasmtimeSkip}`} ms${r.cpu.ratio ? `; ratio ${r.cpu.ratio}x` : ''}`,
    );
  if (r.http) {
    const h = r.http;
    const w = h.wasmtime;
    add(
      `8 wasi:http hello component on nodelet, 1 pod on ${h.address} (${h.seconds} s, ${h.connections} keep-alive conns): req/s, p50/p99`,
      `${h.component.rps} req/s, ${h.component.p50Ms}/${h.component.p99Ms} ms (errors ${h.component.errors})`,
    );
    add(
      '8 plain Node http server, same body, same client: req/s, p50/p99',
      `${h.node.rps} req/s, ${h.node.p50Ms}/${h.node.p99Ms} ms (errors ${h.node.errors}); ratio nodelet/Node: ${h.rpsRatio}x req/s, ${h.p99Ratio}x p99`,
      atLeast('wasi:http req/s, nodelet over plain Node', h.rpsRatio, 0.8, 'x'),
    );
    add('8 p99 latency, nodelet over plain Node', `${h.p99Ratio}x`, atMost('wasi:http p99, nodelet over plain Node', h.p99Ratio, 2, 'x'));
    add(
      `8 ${'skipped' in w ? 'wasmtime' : w.version.split(' ').slice(0, 2).join(' ')} serve, same component file, same client: req/s, p50/p99`,
      'skipped' in w
        ? `skipped: ${w.skipped}`
        : `${w.rps} req/s, ${w.p50Ms}/${w.p99Ms} ms (errors ${w.errors}); ratio nodelet/wasmtime: ${w.rpsRatio}x req/s, ${w.p99Ratio}x p99`,
    );
    add('8 wasi:http first request after Ready (create→Ready)', `${h.firstRequestAfterReadyMs} ms (${h.createToReadyMs} ms)`);
  }
  if (r.instantiation) {
    const i = r.instantiation;
    add(
      `8b wasi:http hello component, one instance (${i.instances} made): jco instantiate / core module alone`,
      `${i.jcoUs} µs / ${i.coreUs} µs (${i.coreModule}, ${i.coreImports} imports, stubbed)`,
    );
    add(
      `8b instance per request with nodelet's host: new instance / reset after a request / GET / on an instance (no HTTP)`,
      `${i.hostUs} µs / ${i.resetUs} µs / ${i.requestUs} µs (${i.stackTracked ? 'stack tracked: only the stack used is reset' : 'stack untracked: the whole memory is reset'})`,
    );
  }
  if (r.probes)
    add(
      `9 ${r.probes.pods} pods with a 1 s readiness probe (${r.probes.windowS}s)`,
      `${r.probes.cores} cores, RSS ${r.probes.rssMiB} MiB; ${r.probes.probesPerS} probes/s on ${r.probes.connections} connections; all Ready in ${Math.round(r.probes.allReadyMs / 1000)} s` +
        `; the same pods without probes ${r.probes.baselineCores} cores`,
      atMost(
        '100 pods probed every second, CPU over the same pods without probes',
        Math.round((r.probes.cores - r.probes.baselineCores) * 1000) / 1000,
        0.1,
        'cores',
      ),
    );
  if (r.cliRun) cliRunRows(r.cliRun, add);
  const totalS = Math.round((Date.now() - t0) / 1000);
  console.log(`\nnodelet bench (${quick ? 'quick' : 'full'}), ${new Date().toISOString()}, ${totalS} s\n`);
  printTable(rows);
  const file = join(ROOT, 'bench', 'results.json');
  const figures = {
    scale: r.scale,
    podStartLatency: {
      nodelet: r.lat,
      kwok: r.latK,
      hollow: r.latH,
      headline: 'client create call start → first watch event with phase Running',
      ratios:
        r.lat && r.latK
          ? {
              burstP99: ratio(r.lat.burst.headline.p99, r.latK.burst.headline.p99),
              burstP50: ratio(r.lat.burst.headline.p50, r.latK.burst.headline.p50),
              singleMedian: ratio(r.lat.single.medianMs, r.latK.single.medianMs),
            }
          : undefined,
      ratiosHollow:
        r.lat && r.latH
          ? {
              burstP99: ratio(r.lat.burst.headline.p99, r.latH.burst.headline.p99),
              burstP50: ratio(r.lat.burst.headline.p50, r.latH.burst.headline.p50),
              singleMedian: ratio(r.lat.single.medianMs, r.latH.single.medianMs),
            }
          : undefined,
    },
    apiCallsPerPod: r.apiCalls,
    density: r.dens?.steps,
    footprint: { idle: r.idle && { ...r.idle, memory: undefined }, at100Pods: r.dens?.at100 },
    moduleStart: { modules: r.mods, replicas: r.dens?.replicas },
    logs: r.logs,
    plugins: r.plugins,
    dra: r.dra,
    cpuBound: r.cpu ?? { skipped: wasmtimeSkip },
    httpComponent: r.http,
    componentInstantiation: r.instantiation,
    probes: r.probes,
    cliRun: r.cliRun,
    help,
  };
  const json = `${JSON.stringify({ date: new Date().toISOString(), mode: quick ? 'quick' : 'full', machine: machine(), dataDir: benchDataBase(), runSeconds: totalS, phaseSeconds: phases, figures, targets }, null, 2)}\n`;
  writeFileSync(file, json);
  writeFileSync(join(ROOT, 'bench', `results-${quick ? 'quick' : 'full'}.json`), json);
  console.log(`\nwrote ${file} (and results-${quick ? 'quick' : 'full'}.json)`);
}
