/**
 * `npm run bench:services [-- --rounds N] [-- --write]`: what nodelet's Service resolver costs and
 * how soon an endpoint change reaches Wasm pods' new connections (bench/README.md, "Services").
 *   1. No cluster (bench/lib/service-routes.ts): a route asked in nodelet's thread, from a
 *      worker over a container's route port (async and blocking), through the external
 *      runtime's socket; a TCP connect for scale. 1,000 Services.
 *   2. The real control plane, a registry and nodelet through its real binary
 *      (`--cluster-domain=cluster.local`, the EndpointSlice binding of deploy/rbac applied; WASI
 *      in-process unless NODELET_WASI_RUNTIME=external): endpoint flips (bench/lib/service-flips.ts).
 *   --rounds N   endpoint flips (default 20)
 *   --write      also write bench/results/services-<in-process|external>.json
 */
import { execFile } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildComponent } from '../test/harness/wasm-components.ts';
import { ensureBuilt } from '../test/harness/build-dist.ts';
import { kubectl } from '../test/e2e/support/kubectl.ts';
import { clientsFor, disposeRoot, NODELET_NODE, startBenchNodelet, startBenchRegistry, startCluster, waitNodeReady } from './lib/env.ts';
import { createNamespace } from './lib/pods.ts';
import { ROOT } from './lib/fixtures.ts';
import { machine } from './lib/proc.ts';
import { printTable } from './lib/report.ts';
import { measureRouteCosts } from './lib/service-routes.ts';
import { measureEndpointFlips } from './lib/service-flips.ts';

const argv = process.argv.slice(2);
const roundsArg = argv.find((a) => a.startsWith('--rounds'));
const rounds = Number(roundsArg?.includes('=') ? roundsArg.split('=')[1] : roundsArg ? argv[argv.indexOf(roundsArg) + 1] : 20);
const write = argv.includes('--write');
const runtime = process.env.NODELET_WASI_RUNTIME || 'in-process';
const POD_INTERFACE = `ndlsvc${process.pid % 1e8}`;

console.log(`[services] on ${JSON.stringify(machine())}, WASI ${runtime}`);
const costs = await measureRouteCosts(1000, 5000);
console.log(`[services] route costs measured`);

const image = await buildComponent('hello-http');
ensureBuilt();
const cleanups: Array<() => Promise<unknown> | void> = [];
let flips;
try {
  const cluster = await startCluster();
  cleanups.push(() => cluster.stop());
  const c = clientsFor(cluster.info);
  const rbac = kubectl(cluster.info, ['apply', '-f', join(ROOT, 'deploy', 'rbac', 'node-endpointslices.yaml')]);
  if (rbac.status !== 0) throw new Error(`kubectl apply: ${rbac.stderr}`);
  const { reg, images } = await startBenchRegistry({ 'hello-http': image });
  cleanups.push(() => reg.stop());
  const nodelet = await startBenchNodelet(cluster.info, { maxPods: 110, extraArgs: [`--pod-interface=${POD_INTERFACE}`, '--cluster-domain=cluster.local'] });
  cleanups.push(
    () => new Promise((done) => execFile('ip', ['link', 'del', POD_INTERFACE], () => done(undefined))),
    () => disposeRoot(nodelet.rootDir),
    () => nodelet.stop(),
  );
  await waitNodeReady(c, NODELET_NODE);
  await createNamespace(c, 'svcbench');
  flips = await measureEndpointFlips(c, { ns: 'svcbench', nodeName: NODELET_NODE, image: images['hello-http']!, rounds, fetches: 300 });
} finally {
  for (const f of cleanups.reverse())
    await Promise.resolve()
      .then(f)
      .catch((e) => console.log(`cleanup: ${String(e)}`));
}

const µs = (m: { p50: number; p99: number }) => `p50 ${m.p50} µs, p99 ${m.p99} µs`;
const ms = (m: { p50: number; p90: number; max: number; n: number }) => `p50 ${m.p50} ms, p90 ${m.p90} ms, max ${m.max} ms (${m.n})`;
console.log(`\nnodelet Services, ${new Date().toISOString()}, WASI ${runtime}\n`);
printTable([
  {
    figure: `route in nodelet's thread (${costs.services} Services)`,
    value: `ClusterIP ${costs.inThreadNs.clusterIP} ns, short name ${costs.inThreadNs.name} ns`,
  },
  { figure: 'route from a worker, async', value: µs(costs.worker.async) },
  { figure: 'route from a worker, blocking (jco path)', value: µs(costs.worker.blocking) },
  { figure: 'route through the runtime socket', value: µs(costs.runtimeSocket) },
  { figure: 'TCP connect + close from a worker', value: µs(costs.worker.tcpConnect) },
  { figure: 'endpoint change → new connections', value: ms(flips.toNewConnections), target: 'max <= 1000 ms', met: flips.toNewConnections.max <= 1000 },
  { figure: 'endpoint change → the bench’s own watch', value: ms(flips.apiWatch) },
  { figure: 'client fetch by ClusterIP', value: ms(flips.fetch.byClusterIP) },
  { figure: 'client fetch by pod IP', value: ms(flips.fetch.byPodIP) },
]);
if (write) {
  const dir = join(ROOT, 'bench', 'results');
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `services-${runtime}.json`);
  writeFileSync(file, `${JSON.stringify({ date: new Date().toISOString(), machine: machine(), runtime, rounds, costs, flips }, null, 2)}\n`);
  console.log(`\nwrote ${file}`);
}
process.exit(flips.toNewConnections.max <= 1000 ? 0 : 1);
