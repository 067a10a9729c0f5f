/**
 * What asking where a connection goes costs (no cluster): core's resolver over a table of
 * `services` Services (3 endpoints each), asked in nodelet's thread, from a worker thread over a
 * container's route port (async, as nodelet's wasi:http host and wasi_experimental_http ask, and
 * blocking, as preview2-shim's outgoing handler asks), and through the external runtime's socket
 * (the runtime's main thread asking nodelet); next to what the connection costs anyway: a TCP
 * connect + close to a local server from the same worker.
 */
import { createServer, type Server } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import type { Logger, ServiceClient, ServiceProtocol, ServiceRoute } from '@nodelet/plugin-api/v1';
import { NodeServiceResolver } from '../../core/services/service-resolver.ts';
import { ServiceTable } from '../../core/services/service-table.ts';
import { openRouteChannel, resolverRouter } from '../../providers/wasi/src/services-channel.ts';
import { RuntimeServer } from '../../providers/wasi/src/runtime/runtime-server.ts';
import { RuntimeConnection } from '../../providers/wasi/src/runtime/runtime-connection.ts';

/** Percentiles of a sample, in µs. */
export interface Micros {
  readonly p50: number;
  readonly p99: number;
  readonly n: number;
}

/** The figures {@link measureRouteCosts} returns. */
export interface RouteCosts {
  readonly services: number;
  /** One `route()` in nodelet's thread (ns, mean over many): a ClusterIP, a short Service name. */
  readonly inThreadNs: { readonly clusterIP: number; readonly name: number };
  /** From a worker, per question: async (a message each way), blocking (Atomics.wait), and a TCP connect + close for scale. */
  readonly worker: { readonly async: Micros; readonly blocking: Micros; readonly tcpConnect: Micros };
  /** The external runtime's main thread asking nodelet over its socket, per question (add `worker.async` for a container's question). */
  readonly runtimeSocket: Micros;
}

const micros = (samples: number[]): Micros => {
  const s = [...samples].sort((a, b) => a - b);
  const at = (q: number) => Math.round(s[Math.min(s.length - 1, Math.floor(q * s.length))]! * 10) / 10;
  return { p50: at(0.5), p99: at(0.99), n: s.length };
};

/** A resolver over `count` Services `svc-<i>` in 20 namespaces (ClusterIP 10.96.x.y:80, 3 ready endpoints each). */
function bigResolver(count: number): NodeServiceResolver {
  const table = new ServiceTable('bench-node');
  table.servicesSynced = table.slicesSynced = true;
  for (let i = 0; i < count; i++) {
    const ns = `ns-${i % 20}`;
    const ip = `10.96.${i >> 8}.${i & 255}`;
    table.upsertService({ metadata: { namespace: ns, name: `svc-${i}` }, spec: { clusterIP: ip, clusterIPs: [ip], ports: [{ port: 80, protocol: 'TCP' }] } });
    table.upsertSlice({
      metadata: { namespace: ns, name: `svc-${i}-x`, labels: { 'kubernetes.io/service-name': `svc-${i}` } },
      addressType: 'IPv4',
      ports: [{ name: '', port: 8080, protocol: 'TCP' }],
      endpoints: [0, 1, 2].map((e) => ({ addresses: [`10.${(i >> 8) + 100}.${i & 255}.${e + 1}`], conditions: { ready: true }, nodeName: 'bench-node' })),
    });
  }
  return new NodeServiceResolver({ table, clusterDomain: 'cluster.local', topology: { nodeName: 'bench-node' }, podDns: () => undefined });
}

const silent: Logger = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined, child: () => silent };

/** Runs the measurements (see the module comment) with `n` questions per figure. */
export async function measureRouteCosts(services: number, n: number): Promise<RouteCosts> {
  const resolver = bigResolver(services);
  const client: ServiceClient = { pod: { namespace: 'ns-7', name: 'client', uid: 'u' }, ip: '10.244.0.9' };
  const target = 7; // svc-7 in ns-7: by ClusterIP, and by its short name from ns-7
  const inThread = (host: string) => {
    for (let i = 0; i < 1000; i++) resolver.route(host, 80, client);
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < n * 20; i++) resolver.route(host, 80, client);
    return Math.round(Number(process.hrtime.bigint() - t0) / (n * 20));
  };
  const inThreadNs = { clusterIP: inThread(`10.96.0.${target}`), name: inThread(`svc-${target}`) };

  const server: Server = createServer((s) => s.destroy());
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  const routes = openRouteChannel(resolverRouter(resolver), client);
  const url = new URL('../../providers/wasi/src/worker/service-route.mjs', import.meta.url).href;
  const worker = new Worker(
    `const { workerData, parentPort } = require('node:worker_threads');
     const net = require('node:net');
     const { url, port, n, host, tcpPort } = workerData;
     const connect = () => new Promise((res, rej) => { const s = net.connect(tcpPort, '127.0.0.1', () => { s.destroy(); res(); }); s.on('error', rej); });
     import(url).then(async ({ RouteClient }) => {
       const routes = new RouteClient(port);
       const time = async (f) => { const out = []; for (let i = 0; i < n + 100; i++) { const t = performance.now(); await f(); if (i >= 100) out.push((performance.now() - t) * 1000); } return out; };
       const async_ = await time(() => routes.route(host, 80));
       const blocking = await time(() => routes.routeSync(host, 80));
       const tcp = await time(connect);
       parentPort.postMessage({ async_, blocking, tcp });
     });`,
    { eval: true, workerData: { url, port: routes.port, n, host: `svc-${target}`, tcpPort: port }, transferList: [routes.port] },
  );
  const w = await new Promise<{ async_: number[]; blocking: number[]; tcp: number[] }>((resolve, reject) => {
    worker.once('message', resolve);
    worker.once('error', reject);
  });
  await worker.terminate();
  routes.close();
  server.close();

  // The runtime's main thread asking nodelet: a real RuntimeServer and a client answering from the resolver.
  const dir = mkdtempSync(join(tmpdir(), 'svc-bench-'));
  const runtime = new RuntimeServer({ socketPath: join(dir, 'runtime.sock'), rootDir: dir, log: silent, provider: { sharedThreads: 0, workerPool: 0 } });
  await runtime.start();
  const conn = await RuntimeConnection.open(
    join(dir, 'runtime.sock'),
    () => undefined,
    () => undefined,
    (ask) => resolver.route(ask.host, ask.port, ask.client, ask.protocol),
  );
  // The runtime's own question (what a container's route port calls in the runtime process).
  const ask = (runtime as unknown as { route(h: string, p: number, c: ServiceClient, pr: ServiceProtocol): Promise<ServiceRoute> }).route.bind(runtime);
  const socket: number[] = [];
  for (let i = 0; i < n + 100; i++) {
    const t = performance.now();
    await ask(`svc-${target}`, 80, client, 'TCP');
    if (i >= 100) socket.push((performance.now() - t) * 1000);
  }
  conn.close();
  await runtime.close();
  rmSync(dir, { recursive: true, force: true });
  return { services, inThreadNs, worker: { async: micros(w.async_), blocking: micros(w.blocking), tcpConnect: micros(w.tcp) }, runtimeSocket: micros(socket) };
}
