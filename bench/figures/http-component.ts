/**
 * Figure 8, a wasi:http component serving: one pod of the hello
 * component (test/fixtures/components/hello-http, answering `hello from <pod>`)
 * on nodelet, and a plain Node `http` server answering the same body in a child
 * process, loaded one after the other in the same run by the same client: an
 * undici Pool of `connections` keep-alive connections, each sending its next GET
 * when the previous answer is read, for `seconds` (after 1 s of warm-up).
 * With wasmtime-cli built (`--with-wasmtime`), the same load also goes, third in
 * the same run, to `wasmtime serve` running the same component file in a child
 * process, so nodelet's serving is compared with a native host of the component
 * as well as with a plain Node server.
 * Also: the latency of the first request, from the moment the bench sees the pod
 * Ready (polled every 10 ms) to that request's answer.
 */
import { execFileSync, spawn } from 'node:child_process';
import type * as k8s from '@kubernetes/client-node';
import { Client, Pool } from 'undici';
import { freePort } from '../../test/harness/ports.ts';
import { nodeBinary } from '../../test/harness/node-binary.ts';
import type { Clients } from '../lib/env.ts';
import { createNamespace, drainNamespace, podSpec } from '../lib/pods.ts';
import { ratio, summary } from '../lib/stats.ts';

/** Throughput and latency of one server under the load. */
export interface LoadResult {
  requests: number;
  errors: number;
  rps: number;
  p50Ms: number;
  p99Ms: number;
}

/** The same load on `wasmtime serve` running the same component. */
export interface WasmtimeServeResult extends LoadResult {
  /** `wasmtime --version`. */
  version: string;
  /** The arguments of `wasmtime` (the component file last). */
  args: string[];
  /** Spawn of `wasmtime serve` to its first answer (Cranelift compiles the component in that time). */
  firstAnswerMs: number;
  /** nodelet / wasmtime. */
  rpsRatio: number;
  p99Ratio: number;
}

/** Result of the wasi:http figure. */
export interface HttpComponentResult {
  seconds: number;
  connections: number;
  /** Where the component listened (its pod IP, or 127.0.0.1 without a pod network). */
  address: string;
  createToReadyMs: number;
  firstRequestAfterReadyMs: number;
  component: LoadResult;
  node: LoadResult;
  /** nodelet / plain Node. */
  rpsRatio: number;
  p99Ratio: number;
  /** The same load on `wasmtime serve`, or why it was not measured. */
  wasmtime: WasmtimeServeResult | { skipped: string };
}

async function load(origin: string, path: string, seconds: number, connections: number, expected: string): Promise<LoadResult> {
  const pool = new Pool(origin, { connections, pipelining: 1 });
  const run = async (ms: number, lat: number[] | undefined) => {
    let errors = 0;
    const end = performance.now() + ms;
    await Promise.all(
      Array.from({ length: connections }, async () => {
        while (performance.now() < end) {
          const t = performance.now();
          try {
            const r = await pool.request({ path, method: 'GET' });
            const body = await r.body.text();
            if (r.statusCode === 200 && body === expected) lat?.push(performance.now() - t);
            else errors++;
          } catch {
            errors++;
          }
        }
      }),
    );
    return errors;
  };
  try {
    await run(1_000, undefined); // warm-up: connections open, JIT warm on both sides
    const lat: number[] = [];
    const errors = await run(seconds * 1_000, lat);
    const s = summary(lat);
    return { requests: lat.length, errors, rps: Math.round(lat.length / seconds), p50Ms: round2(s.p50), p99Ms: round2(s.p99) };
  } finally {
    await pool.close();
  }
}

const round2 = (x: number) => Math.round(x * 100) / 100;

/** A plain Node http server answering `body`, in a child process; resolves with its port and a stop function. */
async function plainNodeServer(body: string): Promise<{ port: number; stop(): void }> {
  const src = `const b=${JSON.stringify(body)};require('node:http').createServer((q,s)=>{s.setHeader('content-type','text/plain');s.end(b)}).listen(0,'127.0.0.1',function(){console.log(this.address().port)})`;
  const child = spawn(nodeBinary(), ['-e', src], { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise<number>((resolve, reject) => {
    child.stdout.once('data', (d) => resolve(Number(String(d).trim())));
    child.once('exit', (code) => reject(new Error(`plain node server exited (${code})`)));
  });
  return { port, stop: () => void child.kill() };
}

/**
 * `wasmtime serve` of `component` on a free port of 127.0.0.1, in a child process; resolves once it answered `expected`
 * (polled every 50 ms, a new connection each time), with its port, the time from spawn to that answer and a stop function.
 */
async function wasmtimeServe(
  wasmtime: string,
  component: string,
  podName: string,
  expected: string,
): Promise<{ port: number; args: string[]; firstAnswerMs: number; stop(): Promise<void> }> {
  const port = await freePort();
  // -S cli=y: the component (Rust std) imports wasi:cli/environment to read POD_NAME, which the proxy world alone lacks.
  const args = ['serve', '--addr', `127.0.0.1:${port}`, '-S', 'cli=y', '--env', `POD_NAME=${podName}`, component];
  const t0 = performance.now();
  const child = spawn(wasmtime, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr = (stderr + d).slice(-4_000)));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  let done = false;
  void exited.then(() => (done = true));
  const stop = async () => {
    if (done) return;
    child.kill('SIGINT'); // wasmtime serve stops on ctrl-c
    const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
    await exited;
    clearTimeout(timer);
  };
  try {
    for (;;) {
      if (done) throw new Error(`wasmtime serve exited before answering: ${stderr.trim().split('\n').slice(-5).join(' | ')}`);
      if (performance.now() - t0 > 60_000) throw new Error(`wasmtime serve did not answer in 60 s: ${stderr.trim().split('\n').slice(-5).join(' | ')}`);
      const client = new Client(`http://127.0.0.1:${port}`);
      try {
        const r = await client.request({ path: '/', method: 'GET' });
        const body = await r.body.text();
        if (r.statusCode === 200 && body === expected) break;
        throw new Error(`wasmtime serve answered ${r.statusCode} ${JSON.stringify(body)}, expected ${JSON.stringify(expected)}`);
      } catch (e) {
        if ((e as Error).message.startsWith('wasmtime serve answered')) throw e;
        await new Promise((r) => setTimeout(r, 50)); // not listening yet
      } finally {
        await client.close();
      }
    }
    return { port, args, firstAnswerMs: Math.round(performance.now() - t0), stop };
  } catch (e) {
    await stop();
    throw e;
  }
}

/** The same load on `wasmtime serve` running `component`; the ratios are nodelet's `component` over wasmtime's. */
async function loadWasmtime(
  wasmtime: string,
  component: string,
  podName: string,
  expected: string,
  seconds: number,
  connections: number,
  nodelet: LoadResult,
): Promise<WasmtimeServeResult> {
  const version = execFileSync(wasmtime, ['--version'], { encoding: 'utf8' }).trim();
  const srv = await wasmtimeServe(wasmtime, component, podName, expected);
  try {
    const l = await load(`http://127.0.0.1:${srv.port}`, '/', seconds, connections, expected);
    return { ...l, version, args: srv.args, firstAnswerMs: srv.firstAnswerMs, rpsRatio: ratio(nodelet.rps, l.rps), p99Ratio: ratio(nodelet.p99Ms, l.p99Ms) };
  } finally {
    await srv.stop();
  }
}

/**
 * Runs figure 8 with the pushed hello component `image`. `wasmtime` is the wasmtime-cli binary and `componentPath` the
 * same component's file for the `wasmtime serve` comparison, or why there is none.
 */
export async function measureHttpComponent(
  c: Clients,
  image: string,
  seconds: number,
  wasmtime: { path: string; componentPath: string } | { skipped: string },
  connections = 16,
): Promise<HttpComponentResult> {
  const ns = 'http-component';
  await createNamespace(c, ns);
  const port = await freePort();
  try {
    const base = podSpec('nodelet', image, []);
    const t0 = Date.now();
    await c.core.createNamespacedPod({
      namespace: ns,
      body: {
        metadata: { name: 'hello' },
        spec: {
          ...base,
          containers: [
            { name: 'main', image, ports: [{ containerPort: port }], env: [{ name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } }] },
          ],
        },
      },
    });
    let pod: k8s.V1Pod | undefined;
    for (;;) {
      pod = await c.core.readNamespacedPod({ name: 'hello', namespace: ns });
      if (pod.status?.conditions?.some((x) => x.type === 'Ready' && x.status === 'True')) break;
      if (Date.now() - t0 > 120_000) throw new Error(`the hello component pod was not Ready in 120 s: ${JSON.stringify(pod.status)}`);
      await new Promise((r) => setTimeout(r, 10));
    }
    const readyAt = performance.now();
    const createToReadyMs = Date.now() - t0;
    const address = pod.status?.podIP && pod.status.podIP !== '127.0.0.1' ? pod.status.podIP : '127.0.0.1';
    const first = await fetch(`http://${address}:${port}/`);
    const expected = await first.text();
    const firstRequestAfterReadyMs = round2(performance.now() - readyAt);
    if (expected !== 'hello from hello\n') throw new Error(`unexpected answer ${JSON.stringify(expected)}`);
    const component = await load(`http://${address}:${port}`, '/', seconds, connections, expected);
    const plain = await plainNodeServer(expected);
    let node: LoadResult;
    try {
      node = await load(`http://127.0.0.1:${plain.port}`, '/', seconds, connections, expected);
    } finally {
      plain.stop();
    }
    // Third, after nodelet and Node, in the same run: the same component on wasmtime's own wasi:http host.
    let wt: HttpComponentResult['wasmtime'];
    if ('skipped' in wasmtime) wt = wasmtime;
    else
      wt = await loadWasmtime(wasmtime.path, wasmtime.componentPath, 'hello', expected, seconds, connections, component).catch((e: unknown) => ({
        skipped: `wasmtime serve failed: ${(e as Error).message ?? String(e)}`,
      }));
    return {
      seconds,
      connections,
      address,
      createToReadyMs,
      firstRequestAfterReadyMs,
      component,
      node,
      rpsRatio: ratio(component.rps, node.rps),
      p99Ratio: ratio(component.p99Ms, node.p99Ms),
      wasmtime: wt,
    };
  } finally {
    await drainNamespace(c, ns);
  }
}
