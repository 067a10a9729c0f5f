/**
 * The benchmark's world: the real control plane, a registry with the modules,
 * nodelet started through its real binary (with the bench trace preload and
 * optional profiling flags), kwok managing one fake Node, and kubemark's
 * hollow node (the upstream kubelet with a fake CRI runtime) on the same
 * control plane.
 */
import { execFileSync } from 'node:child_process';
import { accessSync, constants, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as k8s from '@kubernetes/client-node';
import { issueNodeCredentials, startControlPlane, stopControlPlane, type ClusterInfo } from '../../test/cluster/control-plane.ts';
import { startHollowNode, type HollowNode } from '../../test/cluster/hollow-node.ts';
import { nodeBinary } from '../../test/harness/node-binary.ts';
import { wasiRuntimePid } from '../../test/harness/wasi-runtimes.ts';
import { unmountUnder } from '../../test/harness/unmount-under.ts';
import { freeListenPort } from '../../test/harness/ports.ts';
import { startPeer, waitFor, type Peer } from '../../test/harness/process.ts';
import { startRegistry, type TestRegistry } from '../../test/harness/registry.ts';
import { pushWasmArtifact } from '../../test/harness/oci-push.ts';
import { buildPeers } from '../../test/peers/build-peers.ts';
import { ROOT } from './fixtures.ts';

/** Node names used by the bench. */
export const NODELET_NODE = 'bench-nodelet';
export const KWOK_NODE = 'bench-kwok';
export const HOLLOW_NODE = 'bench-hollow';

/** Where the bench's nodes keep their data when the bench may write there (see {@link benchDataBase}). */
const BENCH_DATA_DIR = '/var/lib/nodelet-bench';

let dataBase: string | undefined;

/**
 * The directory under which the bench's nodes (nodelet, the hollow node, kwok)
 * keep their data: {@link BENCH_DATA_DIR}, beside where a node keeps its data
 * (nodelet's default root is /var/lib/nodelet, the kubelet's /var/lib/kubelet),
 * when it can be created and written; otherwise the temporary directory. On the
 * bench machine creating a file in /tmp costs 8–10× the CPU it costs anywhere
 * else on the same disk (bench/README.md, "Where a node's data lives"), a cost no real node pays;
 * `NODELET_BENCH_DATA_DIR` overrides the choice (the /tmp figures: set it to /tmp).
 */
export function benchDataBase(): string {
  if (dataBase !== undefined) return dataBase;
  const wanted = process.env.NODELET_BENCH_DATA_DIR || BENCH_DATA_DIR;
  try {
    mkdirSync(wanted, { recursive: true });
    accessSync(wanted, constants.W_OK);
    dataBase = wanted;
  } catch {
    dataBase = tmpdir();
  }
  return dataBase;
}

/** Admin clients. */
export interface Clients {
  kc: k8s.KubeConfig;
  core: k8s.CoreV1Api;
  apps: k8s.AppsV1Api;
  storage: k8s.StorageV1Api;
}

/** A running nodelet started by the bench. */
export interface BenchNodelet {
  peer: Peer;
  rootDir: string;
  logFile: string;
  traceFile: string;
  pid: number;
  /** Resolves with the exit code (or signal) when the process ends. */
  exited: Promise<number | string | null>;
  /** The last `n` lines of its log. */
  logTail(n: number): string;
  stop(): Promise<void>;
}

/** Admin API clients for `info`. */
export function clientsFor(info: ClusterInfo): Clients {
  const kc = new k8s.KubeConfig();
  kc.loadFromFile(info.adminKubeconfig);
  return { kc, core: kc.makeApiClient(k8s.CoreV1Api), apps: kc.makeApiClient(k8s.AppsV1Api), storage: kc.makeApiClient(k8s.StorageV1Api) };
}

/**
 * Starts the control plane (built or cached by test/cluster/build.sh). `nodeCidrMaskSize` is the pod
 * CIDR per node (default 22, see below; the fleet's many nodes with 20 pods each take 24).
 */
export async function startCluster(nodeCidrMaskSize = 22): Promise<{ info: ClusterInfo; stop(): Promise<void> }> {
  // A /22 per node (1021 pod IPs): nodelet runs with --max-pods=600 and the scale figure has 500 pods;
  // with the default /24 the 254th pod found no free IP and the 500-pod scale never finished.
  const { info, peers } = await startControlPlane({ nodeMonitorGracePeriod: '40s', nodeCidrMaskSize });
  return { info, stop: () => stopControlPlane(info, peers) };
}

/** Starts a registry and pushes `modules` (name → .wasm path) as `<name>:v1`; returns name → image ref. */
export async function startBenchRegistry(modules: Record<string, string>): Promise<{ reg: TestRegistry; images: Record<string, string> }> {
  const reg = await startRegistry();
  const images: Record<string, string> = {};
  for (const [name, path] of Object.entries(modules)) {
    await pushWasmArtifact(reg.host, name, 'v1', await readFile(path), { format: 'cncf' });
    images[name] = `${reg.host}/${name}:v1`;
  }
  return { reg, images };
}

/** Options of {@link startBenchNodelet}. */
export interface NodeletOpts {
  maxPods: number;
  extraArgs?: string[];
  nodeOptions?: string[];
  /**
   * On nodelet's defaults: WASI modules in the external runtime process (whatever
   * NODELET_WASI_RUNTIME says) and no trace preload (the soak's way).
   */
  defaults?: boolean;
  /** The node's name (default NODELET_NODE). */
  nodeName?: string;
  /** Without the trace preload (WASI modules still run where NODELET_WASI_RUNTIME says, in-process by default). */
  noTrace?: boolean;
}

/** Starts `node --import=<trace preload> [nodeOptions] bin/nodelet.mjs` as NODELET_NODE (or `o.nodeName`). */
export async function startBenchNodelet(info: ClusterInfo, o: NodeletOpts): Promise<BenchNodelet> {
  const nodeName = o.nodeName ?? NODELET_NODE;
  const rootDir = mkdtempSync(join(benchDataBase(), 'nodelet-bench-'));
  const creds = issueNodeCredentials(info, nodeName);
  const logFile = join(rootDir, 'nodelet.log');
  const traceFile = join(rootDir, 'trace.jsonl');
  const args = [
    join(ROOT, 'bin', 'nodelet.mjs'),
    `--kubeconfig=${creds.kubeconfig}`,
    `--hostname-override=${nodeName}`,
    '--node-ip=127.0.0.1',
    `--root-dir=${rootDir}`,
    `--port=${await freeListenPort()}`,
    '--address=127.0.0.1',
    `--healthz-port=${await freeListenPort()}`,
    `--tls-cert-file=${creds.servingCert}`,
    `--tls-private-key-file=${creds.servingKey}`,
    `--client-ca-file=${info.caCert}`,
    `--max-pods=${o.maxPods}`,
    ...(o.extraArgs ?? []),
  ];
  const preload = new URL('../preload/trace-modules.mjs', import.meta.url).href;
  // Node flags go before the script (--cpu-prof is refused in NODE_OPTIONS).
  // The bench runs WASI modules in-process unless NODELET_WASI_RUNTIME=external (its runtime is killed
  // by disposeRoot): earlier figures were taken so.
  // With NODELET_WASI_RUNTIME=external the preload goes in NODE_OPTIONS, which the runtime process inherits.
  const runtime = o.defaults ? 'external' : process.env.NODELET_WASI_RUNTIME || 'in-process';
  const trace = !o.defaults && !o.noTrace;
  const traceIn = runtime === 'external' && trace ? { NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --import=${preload}`.trim() } : {};
  const env = { ...process.env, ...traceIn, NODELET_WASI_RUNTIME: runtime, NODELET_BENCH_TRACE: trace ? traceFile : '' };
  const argv = runtime === 'external' || !trace ? [...(o.nodeOptions ?? []), ...args] : [`--import=${preload}`, ...(o.nodeOptions ?? []), ...args];
  const peer = startPeer(nodeName === NODELET_NODE ? 'nodelet' : `nodelet-${nodeName}`, nodeBinary(), argv, logFile, { env, cwd: rootDir });
  let stopping = false;
  const exited = new Promise<number | string | null>((r) =>
    peer.proc.once('exit', (code, sig) => {
      if (!stopping) r(code ?? sig);
    }),
  );
  return {
    peer,
    rootDir,
    logFile,
    traceFile,
    pid: peer.proc.pid!,
    exited,
    logTail: (n) => {
      try {
        return readFileSync(logFile, 'utf8').split('\n').slice(-n).join('\n');
      } catch {
        return '';
      }
    },
    async stop() {
      stopping = true;
      await peer.stop('SIGTERM', 60_000);
    },
  };
}

/** Removes a nodelet root dir (after stop). */
export function disposeRoot(dir: string): void {
  const runtime = wasiRuntimePid(dir); // an external WASI runtime outlives nodelet on purpose
  if (runtime !== undefined) {
    try {
      process.kill(-runtime, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  unmountUnder(dir); // nodelet's tmpfs volume mounts outlive it
  rmSync(dir, { recursive: true, force: true });
}

/** Waits until node `name` is Ready. */
export async function waitNodeReady(c: Clients, name: string, timeoutMs = 120_000): Promise<void> {
  await waitFor(
    `node ${name} Ready`,
    async () => {
      const n = await c.core.readNode({ name });
      return n.status?.conditions?.find((x) => x.type === 'Ready')?.status === 'True';
    },
    timeoutMs,
    250,
  );
}

/** The taint on the kwok node (its pods tolerate it). */
export const KWOK_TAINT = { key: 'kwok.x-k8s.io/node', value: 'fake', effect: 'NoSchedule' } as const;

/** The kwok module version built by test/peers (its stage files are read from the Go module cache). */
export const KWOK_VERSION = 'v0.8.0';

/**
 * kwok's "fast" stages (what `kwokctl` applies by default: node/fast,
 * node/heartbeat-with-lease, pod/fast), read from the kwok module that
 * test/peers/build.sh downloaded, as one multi-document config file.
 */
export function kwokStagesConfig(): string {
  const modcache = execFileSync('go', ['env', 'GOMODCACHE'], { encoding: 'utf8' }).trim();
  const base = join(modcache, 'sigs.k8s.io', `kwok@${KWOK_VERSION}`, 'kustomize', 'stage');
  const docs: string[] = [];
  for (const d of ['node/fast', 'node/heartbeat-with-lease', 'pod/fast']) {
    for (const f of readdirSync(join(base, d))
      .filter((x) => x.endsWith('.yaml') && x !== 'kustomization.yaml')
      .sort()) {
      docs.push(readFileSync(join(base, d, f), 'utf8'));
    }
  }
  if (!docs.some((x) => /name: pod-ready/.test(x))) throw new Error(`no pod-ready stage under ${base}`);
  return docs.join('\n---\n');
}

/** Options of {@link startKwok}. */
export interface KwokOpts {
  /** The fake Nodes kwok manages (default the one KWOK_NODE). */
  nodes?: readonly string[];
  /** Extra labels of those Nodes. */
  labels?: Record<string, string>;
  /** kwok's kubeconfig (default the admin's). */
  kubeconfig?: string;
}

/**
 * Creates the fake Nodes for kwok (KWOK_NODE, or `o.nodes`) and starts one kwok (admin kubeconfig unless
 * `o.kubeconfig`) managing nodes annotated kwok.x-k8s.io/node=fake; resolves when every one is Ready.
 */
export async function startKwok(
  info: ClusterInfo,
  c: Clients,
  maxPods: number,
  o: KwokOpts = {},
): Promise<{ peer: Peer; nodes: string[]; stop(): Promise<void> }> {
  const res = { cpu: '32', memory: '256Gi', pods: String(maxPods) };
  const nodes = [...(o.nodes ?? [KWOK_NODE])];
  for (const name of nodes)
    await c.core.createNode({
      body: {
        metadata: {
          name,
          annotations: { 'node.alpha.kubernetes.io/ttl': '0', 'kwok.x-k8s.io/node': 'fake' },
          labels: { 'kubernetes.io/hostname': name, 'kubernetes.io/os': 'linux', 'kubernetes.io/arch': 'amd64', type: 'kwok', ...o.labels },
        },
        spec: { taints: [KWOK_TAINT] },
        status: { allocatable: res, capacity: res },
      },
    });
  const dir = mkdtempSync(join(benchDataBase(), 'nodelet-bench-kwok-'));
  writeFileSync(join(dir, 'stages.yaml'), kwokStagesConfig());
  const peer = startPeer(
    'kwok',
    buildPeers().kwok,
    [
      `--kubeconfig=${o.kubeconfig ?? info.adminKubeconfig}`,
      '--manage-all-nodes=false',
      '--manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake',
      '--node-ip=127.0.0.2',
      '--cidr=10.1.0.0/16',
      '--node-lease-duration-seconds=40',
      `--config=${join(dir, 'stages.yaml')}`,
    ],
    join(dir, 'kwok.log'),
    { cwd: dir },
  );
  const stop = async () => {
    await peer.stop('SIGTERM', 10_000);
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await waitNodesReady(c, nodes, 120_000);
  } catch (e) {
    const log = readFileSync(join(dir, 'kwok.log'), 'utf8').split('\n').slice(-5).join('\n');
    await stop();
    throw new Error(`${(e as Error).message}; kwok log tail:\n${log}`);
  }
  return { peer, nodes, stop };
}

/** Waits until every node of `names` is Ready (one list per second: many nodes, one call). */
export async function waitNodesReady(c: Clients, names: readonly string[], timeoutMs: number): Promise<void> {
  const want = new Set(names);
  let notReady: string[] = [...want];
  try {
    await waitFor(
      `${names.length} nodes Ready`,
      async () => {
        const ready = new Set(
          (await c.core.listNode()).items.filter((n) => n.status?.conditions?.find((x) => x.type === 'Ready')?.status === 'True').map((n) => n.metadata!.name!),
        );
        notReady = [...want].filter((n) => !ready.has(n));
        return notReady.length === 0;
      },
      timeoutMs,
      1000,
    );
  } catch (e) {
    throw new Error(`${(e as Error).message}; not Ready: ${notReady.join(', ')}`);
  }
}

/**
 * Starts kubemark's hollow node as HOLLOW_NODE (its own node identity; upstream
 * kubelet config, client QPS/burst 50/100 as the real kubelet's defaults;
 * see bench/README.md) and waits until it is Ready.
 */
export async function startBenchHollowNode(info: ClusterInfo, maxPods: number): Promise<HollowNode> {
  return startHollowNode(info, HOLLOW_NODE, { maxPods, readyTimeoutMs: 180_000, dataBase: benchDataBase() });
}
