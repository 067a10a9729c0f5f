/**
 * `npm run bench -- --only=fleet [--nodes N[,M]] [--quick]`: the fleet figure (bench/figures/fleet.ts)
 * at each size of `--nodes` (default 10 and 50): N nodelets, N hollow nodes and N kwok nodes on one
 * real control plane, one kind at a time. Prints a table and writes bench/results/fleet.json.
 *   --quick        shorter idle window (15 s instead of 30 s) and settle after Ready (5 s instead of 30 s)
 *   --kinds=a,b    only these kinds (nodelet, hollow, kwok)
 *   --settle-s=S   the settle after every node is Ready (a node's one-time start-up requests end in it)
 *   --idle-s=S     the idle window
 */
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildWasmModule } from '../test/harness/wasm-modules.ts';
import { buildKubemark } from '../test/cluster/hollow-node.ts';
import { buildPeers } from '../test/peers/build-peers.ts';
import { ensureBuilt } from '../test/harness/build-dist.ts';
import { measureFleet, type FleetResult } from './figures/fleet.ts';
import { benchDataBase, clientsFor, startBenchRegistry, startCluster } from './lib/env.ts';
import { ROOT } from './lib/fixtures.ts';
import { prepareKwokIdentity, type Fleet, type FleetKind } from './lib/fleet.ts';
import { parseFleetKinds, parseNodeCounts, parseSecondsMs } from './lib/fleet-stats.ts';
import { machine } from './lib/proc.ts';
import { atMost, printTable, type Row, type TargetCheck } from './lib/report.ts';
import { ratio } from './lib/stats.ts';

/** Runs the fleet figure with the bench's arguments `argv`. */
export async function runFleet(argv: readonly string[]): Promise<void> {
  const quick = argv.includes('--quick');
  const sizes = parseNodeCounts(argv);
  const P = {
    podsPerNode: 20,
    settleMs: parseSecondsMs(argv, 'settle-s', quick ? 5_000 : 30_000),
    idleMs: parseSecondsMs(argv, 'idle-s', quick ? 15_000 : 30_000),
    burstTimeoutMs: 600_000,
  };
  const kinds: FleetKind[] = parseFleetKinds(argv);
  const t0 = Date.now();
  const m0 = machine();
  console.log(`[fleet] ${sizes.join(', ')} nodes of each kind (${kinds.join(', ')}) on ${JSON.stringify(m0)}, nodes' data under ${benchDataBase()}`);
  const pause = await buildWasmModule('pause');
  buildPeers();
  buildKubemark();
  ensureBuilt();
  // A /24 per node: 20 pods each, and room for 50 nodes' CIDRs at once.
  const cluster = await startCluster(24);
  const results: FleetResult[] = [];
  const failures: Array<{ kind: FleetKind; nodes: number; error: string }> = [];
  const stops: Array<() => Promise<unknown>> = [() => cluster.stop()];
  let fleet: Fleet | undefined; // the fleet running now: stopped first on an interrupt
  const cleanup = async () => {
    await fleet?.stop().catch((e: unknown) => console.log(`cleanup: ${String(e)}`));
    for (const f of stops.splice(0).reverse()) await f().catch((e: unknown) => console.log(`cleanup: ${String(e)}`));
  };
  process.once('SIGINT', () => void cleanup().then(() => process.exit(130)));
  try {
    const c = clientsFor(cluster.info);
    const { reg, images } = await startBenchRegistry({ pause });
    stops.push(() => reg.stop());
    const kwokKubeconfig = prepareKwokIdentity(cluster.info);
    // nodelet's Services resolver watches EndpointSlices, which the nodes may do once a cluster applies this
    // (as a nodelet cluster does, docs/services.md); without it each nodelet's list is refused and retried
    // every 30 s, requests no deployed node makes.
    execFileSync(
      join(cluster.info.binDir, 'kubectl'),
      [`--kubeconfig=${cluster.info.adminKubeconfig}`, 'apply', '-f', join(ROOT, 'deploy', 'rbac', 'node-endpointslices.yaml')],
      {
        stdio: ['ignore', 'ignore', 'pipe'],
      },
    );
    for (const n of sizes)
      for (const kind of kinds) {
        const t = Date.now();
        console.log(`[fleet ${Math.round((t - t0) / 1000)}s] ${n} ${kind} nodes...`);
        try {
          results.push(
            await measureFleet(
              kind,
              n,
              cluster.info,
              c,
              { nodeletImage: images.pause!, kwokKubeconfig, readyTimeoutMs: 120_000 + n * 6_000 },
              P,
              (f) => (fleet = f),
            ),
          );
        } catch (e) {
          console.log(`  ${n} ${kind} nodes failed: ${(e as Error).stack ?? String(e)}`);
          failures.push({ kind, nodes: n, error: String((e as Error).message ?? e) });
        }
      }
  } finally {
    await cleanup();
  }
  const { rows, targets } = fleetReport(results, sizes);
  console.log(`\nnodelet fleet bench, ${new Date().toISOString()}, ${Math.round((Date.now() - t0) / 1000)} s\n`);
  printTable(rows);
  for (const f of failures) console.log(`FAILED: ${f.nodes} ${f.kind} nodes: ${f.error}`);
  const file = join(ROOT, 'bench', 'results', 'fleet.json');
  writeFileSync(
    file,
    `${JSON.stringify(
      {
        date: new Date().toISOString(),
        mode: quick ? 'quick' : 'full',
        machine: m0,
        loadAtEnd: machine().load,
        params: P,
        runSeconds: Math.round((Date.now() - t0) / 1000),
        results,
        failures,
        targets,
      },
      null,
      2,
    )}\n`,
  );
  console.log(`\nwrote ${file}`);
}

/** The table rows and target checks of the fleet results. */
function fleetReport(results: readonly FleetResult[], sizes: readonly number[]): { rows: Row[]; targets: TargetCheck[] } {
  const rows: Row[] = [];
  const targets: TargetCheck[] = [];
  const add = (figure: string, value: string, t?: TargetCheck) => {
    rows.push({ figure, value, target: t?.target, met: t?.met ?? undefined });
    if (t) targets.push(t);
  };
  const get = (kind: FleetKind, n: number) => results.find((r) => r.kind === kind && r.nodes === n);
  const p99Ratio = (n: number) => {
    const a = get('nodelet', n);
    const h = get('hollow', n);
    return a && h ? ratio(a.burst.latency.p99, h.burst.latency.p99) : Number.NaN;
  };
  for (const n of sizes) {
    for (const r of results.filter((x) => x.nodes === n)) {
      const i = r.idle;
      const b = r.burst;
      add(`fleet ${n} ${r.kind}: all Ready`, `${r.readyMs} ms; load ${r.load.before} → ${r.load.after}${r.exits.length ? `; ${r.exits.length} exited` : ''}`);
      add(
        `fleet ${n} ${r.kind}: idle per node (${i.windowS}s)`,
        `RSS ${i.rssMiBPerNode} MiB (PSS ${i.pssMiBPerNode ?? 'n/a'}), ${i.coresPerNode} cores, ${i.requestsPerSPerNode} req/s (all clients ${i.requestsPerSAllClients} req/s)`,
      );
      add(
        `fleet ${n} ${r.kind}: ${b.pods} pods create→Running p50/p90/p99`,
        `${b.latency.p50}/${b.latency.p90}/${b.latency.p99} ms (creationTimestamp ${b.sig.p50}/${b.sig.p99}; node's Ready ${b.nodeReported.p50}/${b.nodeReported.p99}); ${b.running}/${b.pods} Running` +
          (b.createFailures.length ? ` (${b.createFailures.length} never created)` : '') +
          (b.createRetries ? `, ${b.createRetries} creates retried` : '') +
          (b.allRunningMs !== undefined ? ` in ${b.allRunningMs} ms` : '') +
          `; ${b.podsPerNode.min}-${b.podsPerNode.max} per node; watch resumed ${b.watchReopens}×`,
      );
      add(
        `fleet ${n} ${r.kind}: burst per node (${b.windowS}s)`,
        `${b.requestsPerSPerNode} req/s, ${b.requestsPerPod} req per pod (of which events ${b.nodeEventsPerPod}), ${b.coresPerNode} cores (all clients ${b.requestsPerSAllClients} req/s)`,
      );
    }
    const nl = get('nodelet', n);
    const h = get('hollow', n);
    if (nl) {
      add(
        `fleet ${n} target: nodelet pods Running`,
        `${nl.burst.running}/${nl.burst.pods}`,
        atMost(`fleet ${n}: nodelet pods not Running`, nl.burst.pods - nl.burst.running, 0, 'pods'),
      );
      const slo = nl.burst.latency.p99 <= 5000;
      const base = sizes.includes(10) && n !== 10 ? p99Ratio(10) : Number.NaN;
      add(
        `fleet ${n} target: nodelet p99 ≤ 5 s, else p99/hollow ≤ at 10 nodes`,
        `${nl.burst.latency.p99} ms; nodelet/hollow ${p99Ratio(n)}x${Number.isFinite(base) ? ` (at 10 nodes ${base}x)` : ''}`,
        slo || !Number.isFinite(base)
          ? atMost(`fleet ${n}: nodelet pod start p99`, nl.burst.latency.p99, 5000, 'ms')
          : atMost(`fleet ${n}: nodelet/hollow pod start p99 ratio over the one at 10 nodes`, ratio(p99Ratio(n), base), 1, 'x'),
      );
    }
    if (nl && h) {
      add(
        `fleet ${n} target: idle RSS per node nodelet ≤ hollow`,
        `${nl.idle.rssMiBPerNode} vs ${h.idle.rssMiBPerNode} MiB`,
        atMost(`fleet ${n}: idle RSS per node over the hollow node's`, r1(nl.idle.rssMiBPerNode - h.idle.rssMiBPerNode), 0, 'MiB'),
      );
      add(
        `fleet ${n} target: idle req/s per node nodelet ≤ hollow`,
        `${nl.idle.requestsPerSPerNode} vs ${h.idle.requestsPerSPerNode}`,
        atMost(`fleet ${n}: idle req/s per node over the hollow node's`, r3(nl.idle.requestsPerSPerNode - h.idle.requestsPerSPerNode), 0, 'req/s'),
      );
      add(
        `fleet ${n} target: burst req/s per node nodelet ≤ hollow`,
        `${nl.burst.requestsPerSPerNode} vs ${h.burst.requestsPerSPerNode}`,
        atMost(`fleet ${n}: burst req/s per node over the hollow node's`, r3(nl.burst.requestsPerSPerNode - h.burst.requestsPerSPerNode), 0, 'req/s'),
      );
      // A faster node sends the same requests in a shorter window: per pod they compare without the speed.
      // The hollow kubelet's events go to a FakeRecorder: per pod the nodes compare without them.
      const noEvents = (x: FleetResult) => r3(x.burst.requestsPerPod - x.burst.nodeEventsPerPod);
      add(
        `fleet ${n} target: burst req per pod without events nodelet ≤ hollow`,
        `${noEvents(nl)} vs ${noEvents(h)} (with events ${nl.burst.requestsPerPod} vs ${h.burst.requestsPerPod})`,
        atMost(`fleet ${n}: burst requests per pod without events over the hollow node's`, r3(noEvents(nl) - noEvents(h)), 0, 'req'),
      );
    }
  }
  return { rows, targets };
}

const r1 = (v: number) => Math.round(v * 10) / 10;
const r3 = (v: number) => Math.round(v * 1000) / 1000;
