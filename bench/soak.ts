/**
 * `npm run soak [-- --minutes M] [-- --write] [-- --strict]`: starts the real control plane, a
 * registry with the test modules and the hello-http component, and one nodelet through its real
 * binary on its defaults (WASI modules in the external runtime process, no trace preload), then
 * churns pods through the apiserver for M minutes (default 5; bench/lib/soak.ts: short jobs,
 * sleepers, crash-loopers, emptyDir users, wasi:http pods, ~30 alive at once) and prints the slope
 * of nodelet's and the runtime's RSS, fds and threads, the mounts and files under the root dir, per
 * 1,000 pods after the warm-up.
 *   --minutes M      length of the churn (default 5)
 *   --live N         pods alive at once (default 30)
 *   --sample-s S     sampling period in seconds (default 5)
 *   --write          also write bench/results/soak-<M>m.json
 *   --strict         exit 1 when a slope is over its limit (bench/lib/soak.ts SOAK_LIMITS) or a deleted
 *                    pod left a path or a mount under the root dir (without it: only when a pod did not
 *                    end as its kind should, or the runtime process was restarted)
 * Everything started is stopped on exit, on an error and on Ctrl-C (pods deleted unless interrupted,
 * nodelet stopped, the runtime killed, mounts under the root dir unmounted and the root dir removed,
 * the pod bridge removed, the registry and the control plane stopped).
 */
import { execFile } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildWasmModule } from '../test/harness/wasm-modules.ts';
import { buildComponent } from '../test/harness/wasm-components.ts';
import { ensureBuilt } from '../test/harness/build-dist.ts';
import { wasiRuntimePid } from '../test/harness/wasi-runtimes.ts';
import { clientsFor, disposeRoot, NODELET_NODE, startBenchNodelet, startBenchRegistry, startCluster, waitNodeReady, benchDataBase } from './lib/env.ts';
import { createNamespace, drainNamespace } from './lib/pods.ts';
import { ROOT } from './lib/fixtures.ts';
import { machine } from './lib/proc.ts';
import { printTable, type Row } from './lib/report.ts';
import { kubeletMetrics, runSoak, soakChecks, type SoakImages, type SoakResult } from './lib/soak.ts';

const argv = process.argv.slice(2);
const arg = (name: string): string | undefined => {
  const i = argv.findIndex((a) => a === `--${name}` || a.startsWith(`--${name}=`));
  if (i < 0) return undefined;
  return argv[i]!.includes('=') ? argv[i]!.slice(argv[i]!.indexOf('=') + 1) : argv[i + 1];
};
const minutes = Number(arg('minutes') ?? 5);
const live = Number(arg('live') ?? 30);
const sampleS = Number(arg('sample-s') ?? 5);
const write = argv.includes('--write');
const strict = argv.includes('--strict');
if (!(minutes > 0) || !(live > 0) || !(sampleS > 0)) {
  console.error('usage: npm run soak -- [--minutes M] [--live N] [--sample-s S] [--write] [--strict]');
  process.exit(2);
}
// The soak's own pod bridge, one per run (at most 15 bytes): a bench, an e2e node on the default
// nodelet0 or another soak keeps its own.
const POD_INTERFACE = `ndlsoak${process.pid % 1e7}`;

const t0 = Date.now();
console.log(`[soak] ${minutes} min, ${live} pods alive, on ${JSON.stringify(machine())}, data under ${benchDataBase()}`);
const modules: Record<string, string> = {};
for (const m of ['hello', 'sleep', 'exit-code', 'write-file']) modules[m] = await buildWasmModule(m);
let httpSkip: string | undefined;
try {
  modules['hello-http'] = await buildComponent('hello-http');
} catch (e) {
  httpSkip = String((e as Error).message ?? e).split('\n')[0];
  console.log(`  no wasi:http pods: ${httpSkip}`);
}
ensureBuilt(); // nodelet runs from dist/

const cleanups: Array<() => Promise<unknown> | void> = [];
const cleanup = async () => {
  for (const f of cleanups.splice(0).reverse())
    await Promise.resolve()
      .then(f)
      .catch((e) => console.log(`cleanup: ${String(e)}`));
};
// Ctrl-C reaches the whole process group (nodelet and the control plane too): clean up at once, no
// pod deletion (the cluster goes with it); the WASI runtime, in its own session, is killed by pid.
const interrupted = new AbortController();
for (const sig of ['SIGINT', 'SIGTERM'] as const)
  process.once(sig, () => {
    if (interrupted.signal.aborted) return;
    console.log(`[soak] ${sig}: cleaning up`);
    interrupted.abort();
    void cleanup().then(() => process.exit(130));
  });

let failed = false;
try {
  const cluster = await startCluster();
  cleanups.push(() => cluster.stop());
  const c = clientsFor(cluster.info);
  const { reg, images } = await startBenchRegistry(modules);
  cleanups.push(() => reg.stop());
  const nodelet = await startBenchNodelet(cluster.info, { maxPods: 110, defaults: true, extraArgs: [`--pod-interface=${POD_INTERFACE}`] });
  cleanups.push(
    () => new Promise((done) => execFile('ip', ['link', 'del', POD_INTERFACE], () => done(undefined))),
    () => disposeRoot(nodelet.rootDir),
    () => nodelet.stop(),
  );
  await Promise.race([
    waitNodeReady(c, NODELET_NODE),
    nodelet.exited.then((code) => {
      throw new Error(`nodelet exited (${code}) before its node was Ready; log tail:\n${nodelet.logTail(30)}`);
    }),
  ]);
  const kubeletPort = (await c.core.readNode({ name: NODELET_NODE })).status?.daemonEndpoints?.kubeletEndpoint?.Port;
  await createNamespace(c, 'soak');
  cleanups.push(() => (interrupted.signal.aborted ? undefined : drainNamespace(c, 'soak', 120_000)));
  console.log(`[soak] setup took ${Math.round((Date.now() - t0) / 1000)} s (nodelet pid ${nodelet.pid}, root ${nodelet.rootDir}); priming`);
  const img: SoakImages = {
    hello: images.hello!,
    sleep: images.sleep!,
    exitCode: images['exit-code']!,
    writeFile: images['write-file']!,
    http: images['hello-http'],
  };
  const r = await runSoak({
    kc: c.kc,
    namespace: 'soak',
    node: {
      nodeName: NODELET_NODE,
      rootDir: nodelet.rootDir,
      nodeletPid: () => nodelet.pid,
      runtimePid: () => wasiRuntimePid(nodelet.rootDir),
      podInterface: POD_INTERFACE,
      // As the apiserver reads it (the bench's nodelet has a serving certificate of the cluster CA).
      metrics: kubeletMetrics(() => kubeletPort, cluster.info.caCert, { cert: cluster.info.kubeletClientCert, key: cluster.info.kubeletClientKey }),
    },
    images: img,
    durationMs: minutes * 60_000,
    livePods: live,
    sampleEveryMs: sampleS * 1000,
    signal: interrupted.signal,
  });
  failed = report(r);
} catch (e) {
  console.log(`[soak] failed: ${(e as Error).stack ?? String(e)}`);
  failed = true;
} finally {
  await cleanup();
}
process.exit(failed ? 1 : 0);

/** Prints the table (and writes the JSON with --write); true when the run failed (errors, or a limit missed with --strict). */
function report(r: SoakResult): boolean {
  const rows: Row[] = [];
  const checks = new Map(soakChecks(r).map((x) => [x.metric, x]));
  rows.push({
    figure: 'pods created',
    value: `${r.podsCreated} in ${r.durationS} s (${r.podsPerMinute}/min, ${r.livePods} alive); ${Object.entries(r.byKind)
      .map(([k, v]) => `${k} ${v.created}`)
      .join(', ')}`,
  });
  rows.push({
    figure: 'errors (pods not ending as expected)',
    value: `${r.errorCount}; cut short by the end: ${r.cutShort}`,
    target: '0',
    met: r.errorCount === 0,
  });
  rows.push({ figure: 'warm-up', value: `until ${r.warmup.untilS} s / ${r.warmup.untilPods} pods` });
  for (const [name, m] of Object.entries(r.metrics)) {
    const ch = checks.get(name);
    rows.push({
      figure: `${name} per 1,000 pods`,
      value: `${m.slopePer1000} ${m.unit}, floor ${m.floorSlopePer1000} (start ${m.start}, end ${m.end}, min ${m.min}, max ${m.max}; idle after − before ${m.idleDelta ?? 'n/a'})`,
      target: ch ? `${ch.on === 'floor' ? 'floor ' : ''}<= ${ch.limit}` : undefined,
      met: ch?.met,
    });
  }
  rows.push({ figure: 'settled after the churn', value: `${r.settleMs} ms` });
  rows.push({
    figure: 'leftovers naming a deleted pod',
    value: `${r.leftovers.pathCount} paths${r.leftovers.pathCount ? ` (${r.leftovers.paths.slice(0, 3).join(', ')}...)` : ''}, ${r.leftovers.mounts.length} mounts`,
    target: '0',
    met: r.leftovers.pathCount === 0 && r.leftovers.mounts.length === 0,
  });
  rows.push({ figure: 'WASI runtime pids', value: r.runtimePids.join(', '), target: '1', met: r.runtimePids.length === 1 });
  console.log(`\nnodelet soak, ${minutes} min, ${new Date().toISOString()}, ${Math.round((Date.now() - t0) / 1000)} s in all\n`);
  printTable(rows);
  for (const e of r.errors.slice(0, 10)) console.log(`  error ${e.pod} (${e.kind}): ${e.what}`);
  if (write) {
    const dir = join(ROOT, 'bench', 'results');
    mkdirSync(dir, { recursive: true });
    const file = join(dir, `soak-${minutes}m.json`);
    writeFileSync(
      file,
      `${JSON.stringify({ date: new Date().toISOString(), minutes, machine: machine(), dataDir: benchDataBase(), httpSkip, checks: [...checks.values()], ...r }, null, 2)}\n`,
    );
    console.log(`\nwrote ${file}`);
  }
  const missed = [...checks.values()].filter((x) => !x.met);
  if (missed.length)
    console.log(
      `\nover the limit: ${missed.map((x) => `${x.metric} ${x.on === 'floor' ? '(floor) ' : ''}${x.slopePer1000} > ${x.limit}`).join('; ')}${strict ? '' : ' (not failing: no --strict)'}`,
    );
  const leftovers = r.leftovers.pathCount + r.leftovers.mounts.length;
  return r.errorCount > 0 || r.runtimePids.length > 1 || (strict && (missed.length > 0 || leftovers > 0));
}
