/**
 * The soak: pods created and deleted continuously on one nodelet through the
 * apiserver, a steady mix of short jobs, sleepers deleted after a few seconds,
 * crash-loopers deleted after their second restart, emptyDir volume users and
 * (when its image is given) wasi:http component pods answering one request,
 * while nodelet's and its WASI runtime process's RSS/PSS, open fds and threads,
 * the mounts under the root dir, the files under it and the addresses on the
 * pod interface are sampled. After a warm-up each metric's least-squares slope
 * against the pods created is the leak figure (per 1,000 pods). Before the
 * churn one pod of each kind runs (images pulled, the runtime started) and the
 * node is left idle for a baseline; after it every pod is deleted and the node
 * is again sampled idle, and every path under the root dir still naming a pod
 * of the run is a leftover. Used by `npm run soak` (bench/soak.ts) and by the
 * short soak of the e2e suite (test/e2e/soak.test.ts).
 */
import { execFileSync } from 'node:child_process';
import { lstatSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { join } from 'node:path';
import * as k8s from '@kubernetes/client-node';
import { httpsGet } from '../../test/cluster/control-plane.ts';
import { httpGet } from '../../test/harness/http-get.ts';
import { mountsUnder } from '../../test/harness/unmount-under.ts';
import { WASM_TOLERATION } from '../../test/e2e/support/images.ts';

/** The kinds of pod the churn makes. */
export type PodKind = 'job' | 'sleeper' | 'crash' | 'volume' | 'http';

/** Images of the churn: test/fixtures/wasm modules and the hello-http component (optional). */
export interface SoakImages {
  /** hello.c: prints and exits 0. */
  hello: string;
  /** sleep.c: ticks every second. */
  sleep: string;
  /** exit-code.c: exits with its argument. */
  exitCode: string;
  /** write-file.c: writes a file and exits 0. */
  writeFile: string;
  /** The hello-http wasi:http component; without it its share of the mix goes to short jobs. */
  http?: string;
}

/** The node under soak. */
export interface SoakNode {
  nodeName: string;
  rootDir: string;
  nodeletPid(): number | undefined;
  /** The WASI runtime's pid (`<root-dir>/providers-data/wasi/runtime.pid`). */
  runtimePid(): number | undefined;
  /** The pod bridge, whose addresses are counted (pod IPs). */
  podInterface?: string;
  /** nodelet's /metrics text (e.g. through the apiserver's node proxy), when it can be read. */
  metrics?: () => Promise<string | undefined>;
}

/** Options of {@link runSoak}. */
export interface SoakOptions {
  kc: k8s.KubeConfig;
  namespace: string;
  node: SoakNode;
  images: SoakImages;
  /** Length of the churn. */
  durationMs: number;
  /** Pods kept alive (created and not yet gone) at once; default 30. */
  livePods?: number;
  /** Sampling period; default 5 s. */
  sampleEveryMs?: number;
  /**
   * The warm-up ends at the later of: this fraction of the time (default 0.2) and this many pods
   * (default 500); at half the time at the latest.
   */
  warmupFraction?: number;
  warmupPods?: number;
  /** Ends the churn early (Ctrl-C); the pods are still deleted and the node sampled idle. */
  signal?: AbortSignal;
  log?: (line: string) => void;
}

/** One process's figures. */
export interface ProcFigures {
  pid: number;
  rssMiB: number;
  pssMiB?: number;
  fds: number;
  /** Open fds on a file of a pod still alive (its log, its volumes): the population's share, not a leak. */
  livePodFds: number;
  threads: number;
}

/** One sample of the node. */
export interface SoakSample {
  /** Seconds since the churn started (negative: before it). */
  t: number;
  /** Pods created so far by the churn. */
  pods: number;
  /** Pods alive (created, not yet gone) when sampled. */
  live: number;
  nodelet?: ProcFigures;
  runtime?: ProcFigures;
  mounts: number;
  /** Mounts of a pod still alive (its projected and Memory volumes). */
  livePodMounts: number;
  /** Entries (files, directories, sockets) under the root dir. */
  files: number;
  /** Bytes of the regular files under the root dir (logs included). */
  bytes: number;
  /** Addresses on the pod interface. */
  podIPs?: number;
  /**
   * From nodelet's /metrics: its V8 heap in use and committed (`nodejs_heap_size_used_bytes`,
   * `..._total_bytes`), the memory of its ArrayBuffers and Buffers (`nodejs_external_memory_bytes`),
   * and its count of metric series.
   */
  heapUsedMiB?: number;
  heapTotalMiB?: number;
  externalMiB?: number;
  metricSeries?: number;
}

/** A metric's values and its slope after the warm-up. */
export interface MetricFigures {
  unit: string;
  /** First and last sample after the warm-up. */
  start: number;
  end: number;
  min: number;
  max: number;
  /** Least squares against pods created, per 1,000 pods (samples after the warm-up). */
  slopePer1000: number;
  /**
   * The same over the floor: the lowest sample of each tenth of the samples after the warm-up (of
   * fewer runs, 3 samples at least, in a short run). A
   * leak raises the floor; an fd or a thread that lives while a container starts only adds to the
   * samples that caught it.
   */
  floorSlopePer1000: number;
  /** Idle after the churn minus idle before it. */
  idleDelta?: number;
}

/** A pod that did not end as its kind should. */
export interface SoakError {
  pod: string;
  kind: PodKind;
  what: string;
}

/** What {@link runSoak} found. */
export interface SoakResult {
  durationS: number;
  livePods: number;
  podsCreated: number;
  podsPerMinute: number;
  byKind: Record<PodKind, { created: number; ok: number; cutShort: number }>;
  /** Pods still in their lifecycle when the churn ended: deleted before their expected state (not errors). */
  cutShort: number;
  errorCount: number;
  /** The first 50 errors. */
  errors: SoakError[];
  warmup: { untilS: number; untilPods: number };
  /** The node idle after one pod of each kind, and idle again after the churn (every pod gone). */
  baseline: SoakSample;
  after: SoakSample;
  /** From the last pod gone to the idle sample after the churn (mounts, pod directories and fds settled). */
  settleMs: number;
  /** Paths under the root dir that still name a pod of the run (its UID: their count and the first 50), and mounts left over the baseline. */
  leftovers: { pathCount: number; paths: string[]; mounts: string[] };
  /** Every WASI runtime pid seen (more than one: the runtime was restarted). */
  runtimePids: number[];
  metrics: Record<string, MetricFigures>;
  samples: SoakSample[];
}

const MIX: readonly PodKind[] = ['job', 'sleeper', 'volume', 'job', 'crash', 'job', 'http', 'volume', 'sleeper', 'job'];
const STATE_TIMEOUT_MS = 90_000;
const UID_IN_PATH = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g;
const GONE_TIMEOUT_MS = 90_000;
const SETTLE_TIMEOUT_MS = 60_000;

const kib = (text: string, field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(text)?.[1] ?? NaN);
const round1 = (x: number) => Math.round(x * 10) / 10;
const round3 = (x: number) => Math.round(x * 1000) / 1000;

/** Says whether a path under the root dir is a file of a pod still alive (`<root>/pods/<uid>/…`, `<root>/logs/pods/<ns>_<name>_<uid>/…`). */
export type LivePodPath = (path: string) => boolean;

/** A {@link LivePodPath} for `rootDir` and the UIDs `alive` says are alive. */
export function livePodPath(rootDir: string, alive: (uid: string) => boolean): LivePodPath {
  const pods = `${rootDir}/pods/`;
  const logs = `${rootDir}/logs/pods/`;
  return (p) => {
    if (p.startsWith(pods)) return alive(p.slice(pods.length).split('/')[0]!);
    if (p.startsWith(logs)) return alive(p.slice(logs.length).split('/')[0]!.split('_').at(-1)!);
    return false;
  };
}

/** RSS, PSS (smaps_rollup, when readable), open fds (and those on live pods' files) and threads of `pid`; undefined when it is gone. */
export function procFigures(pid: number | undefined, live: LivePodPath = () => false): ProcFigures | undefined {
  if (pid === undefined) return undefined;
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const fdNames = readdirSync(`/proc/${pid}/fd`);
    let livePodFds = 0;
    for (const fd of fdNames) {
      try {
        if (live(readlinkSync(`/proc/${pid}/fd/${fd}`))) livePodFds++;
      } catch {
        // closed meanwhile
      }
    }
    let pssMiB: number | undefined;
    try {
      pssMiB = round1(kib(readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'), 'Pss') / 1024);
    } catch {
      pssMiB = undefined;
    }
    const threads = Number(/^Threads:\s+(\d+)/m.exec(status)?.[1] ?? NaN);
    return { pid, rssMiB: round1(kib(status, 'VmRSS') / 1024), pssMiB, fds: fdNames.length, livePodFds, threads };
  } catch {
    return undefined;
  }
}

/**
 * nodelet's /metrics read as the apiserver reads a kubelet (its kubelet client certificate),
 * verifying the serving certificate with `caFile`; undefined when it cannot be read.
 */
export function kubeletMetrics(port: () => number | undefined, caFile: string, client: { cert: string; key: string }): () => Promise<string | undefined> {
  return async () => {
    const p = port();
    if (p === undefined) return undefined;
    const r = await httpsGet(`https://127.0.0.1:${p}/metrics`, { ca: caFile, ...client }, 10_000);
    return r.status === 200 ? r.body : undefined;
  };
}

/** Entries and bytes of regular files under `dir` (symlinks not followed); calls `visit` with each path. */
export function walk(dir: string, visit?: (path: string) => void): { files: number; bytes: number } {
  let files = 0;
  let bytes = 0;
  const todo = [dir];
  while (todo.length) {
    const d = todo.pop()!;
    let names: string[];
    try {
      names = readdirSync(d);
    } catch {
      continue; // removed meanwhile
    }
    for (const n of names) {
      const p = join(d, n);
      files++;
      visit?.(p);
      try {
        const st = lstatSync(p);
        if (st.isDirectory()) todo.push(p);
        else if (st.isFile()) bytes += st.size;
      } catch {
        // removed meanwhile
      }
    }
  }
  return { files, bytes };
}

/** Addresses on `dev` (`ip -o addr show dev`), or undefined without one. */
function addressesOn(dev: string | undefined): number | undefined {
  if (!dev) return undefined;
  try {
    return execFileSync('ip', ['-o', 'addr', 'show', 'dev', dev], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] })
      .split('\n')
      .filter(Boolean).length;
  } catch {
    return 0;
  }
}

/** nodelet's heap in use and its metric series, from its /metrics text. */
async function fromMetrics(node: SoakNode): Promise<{ heapUsedMiB?: number; heapTotalMiB?: number; externalMiB?: number; metricSeries?: number }> {
  const text = await node.metrics?.().catch(() => undefined);
  if (!text) return {};
  const mib = (name: string) => {
    const v = new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1];
    return v === undefined ? undefined : round1(Number(v) / 1048576);
  };
  return {
    heapUsedMiB: mib('nodejs_heap_size_used_bytes'),
    heapTotalMiB: mib('nodejs_heap_size_total_bytes'),
    externalMiB: mib('nodejs_external_memory_bytes'),
    metricSeries: text.split('\n').filter((l) => l && !l.startsWith('#')).length,
  };
}

/** Samples the node now; `alive` says which pod UIDs are alive. */
export async function sampleNode(node: SoakNode, t: number, pods: number, live: number, alive: (uid: string) => boolean = () => false): Promise<SoakSample> {
  const fromText = await fromMetrics(node);
  const { files, bytes } = walk(node.rootDir);
  const onLivePod = livePodPath(node.rootDir, alive);
  const mounts = mountsUnder(node.rootDir);
  return {
    ...fromText,
    t: round1(t),
    pods,
    live,
    nodelet: procFigures(node.nodeletPid(), onLivePod),
    runtime: procFigures(node.runtimePid(), onLivePod),
    mounts: mounts.length,
    livePodMounts: mounts.filter(onLivePod).length,
    files,
    bytes,
    podIPs: addressesOn(node.podInterface),
  };
}

/** Least-squares slope of `ys` against `xs` (NaN with fewer than 2 distinct xs). */
export function slope(xs: readonly number[], ys: readonly number[]): number {
  const n = xs.length;
  if (n < 2) return NaN;
  const mx = xs.reduce((a, b) => a + b, 0) / n;
  const my = ys.reduce((a, b) => a + b, 0) / n;
  let sxy = 0;
  let sxx = 0;
  for (let i = 0; i < n; i++) {
    sxy += (xs[i]! - mx) * (ys[i]! - my);
    sxx += (xs[i]! - mx) ** 2;
  }
  return sxx === 0 ? NaN : sxy / sxx;
}

/**
 * Least-squares slope over the lowest point of each of `windows` consecutive runs of `pts` (fewer
 * runs, of 3 points at least, when there are not enough points; all points below 6).
 */
export function floorSlope(pts: ReadonlyArray<readonly [number, number]>, most = 10): number {
  const windows = Math.min(most, Math.floor(pts.length / 3));
  if (windows < 2)
    return slope(
      pts.map((p) => p[0]),
      pts.map((p) => p[1]),
    );
  const floor: Array<readonly [number, number]> = [];
  for (let w = 0; w < windows; w++) {
    const run = pts.slice(Math.floor((w * pts.length) / windows), Math.floor(((w + 1) * pts.length) / windows));
    floor.push(run.reduce((lo, p) => (p[1] < lo[1] ? p : lo)));
  }
  return slope(
    floor.map((p) => p[0]),
    floor.map((p) => p[1]),
  );
}

/** The metrics of a sample, by name, with their units. */
export const METRICS: ReadonlyArray<{ name: string; unit: string; of: (s: SoakSample) => number | undefined }> = [
  { name: 'nodelet RSS', unit: 'MiB', of: (s) => s.nodelet?.rssMiB },
  { name: 'nodelet PSS', unit: 'MiB', of: (s) => s.nodelet?.pssMiB },
  { name: 'nodelet heap used', unit: 'MiB', of: (s) => s.heapUsedMiB },
  { name: 'nodelet heap committed', unit: 'MiB', of: (s) => s.heapTotalMiB },
  { name: 'nodelet external memory', unit: 'MiB', of: (s) => s.externalMiB },
  { name: 'nodelet metric series', unit: 'series', of: (s) => s.metricSeries },
  { name: 'nodelet fds', unit: 'fds', of: (s) => s.nodelet?.fds },
  { name: 'nodelet fds beyond live pods', unit: 'fds', of: (s) => s.nodelet && s.nodelet.fds - s.nodelet.livePodFds },
  { name: 'nodelet threads', unit: 'threads', of: (s) => s.nodelet?.threads },
  { name: 'runtime RSS', unit: 'MiB', of: (s) => s.runtime?.rssMiB },
  { name: 'runtime PSS', unit: 'MiB', of: (s) => s.runtime?.pssMiB },
  { name: 'runtime fds', unit: 'fds', of: (s) => s.runtime?.fds },
  { name: 'runtime fds beyond live pods', unit: 'fds', of: (s) => s.runtime && s.runtime.fds - s.runtime.livePodFds },
  { name: 'runtime threads', unit: 'threads', of: (s) => s.runtime?.threads },
  { name: 'mounts under root', unit: 'mounts', of: (s) => s.mounts },
  { name: 'mounts beyond live pods', unit: 'mounts', of: (s) => s.mounts - s.livePodMounts },
  { name: 'files under root', unit: 'files', of: (s) => s.files },
  { name: 'pod IPs on the bridge', unit: 'addresses', of: (s) => s.podIPs },
];

/**
 * Limits of `--strict` (per 1,000 pods after the warm-up): memory 1 MiB (slope of all samples),
 * fds/threads/mounts 0 (slope of the floor, {@link MetricFigures.floorSlopePer1000}; 0.5 of
 * tolerance for a count's noise). fds and mounts are counted without those on a live pod's files:
 * those follow the pods alive at the sample, not the pods created; an fd or a mount of a deleted pod,
 * a socket, a pipe still counts.
 */
export const SOAK_LIMITS: Readonly<Record<string, { limit: number; on: 'all' | 'floor' }>> = {
  'nodelet RSS': { limit: 1, on: 'all' },
  'runtime RSS': { limit: 1, on: 'all' },
  'nodelet fds beyond live pods': { limit: 0.5, on: 'floor' },
  'runtime fds beyond live pods': { limit: 0.5, on: 'floor' },
  'nodelet threads': { limit: 0.5, on: 'floor' },
  'runtime threads': { limit: 0.5, on: 'floor' },
  'mounts beyond live pods': { limit: 0.5, on: 'floor' },
};

/** Each limit of {@link SOAK_LIMITS} against `r`: the slope it applies to, the limit, met. */
export function soakChecks(r: SoakResult): Array<{ metric: string; on: 'all' | 'floor'; slopePer1000: number; limit: number; met: boolean }> {
  return Object.entries(SOAK_LIMITS).map(([metric, { limit, on }]) => {
    const m = r.metrics[metric];
    const v = (on === 'all' ? m?.slopePer1000 : m?.floorSlopePer1000) ?? NaN;
    return { metric, on, slopePer1000: v, limit, met: Number.isFinite(v) && v <= limit };
  });
}

/** The churn's pod objects, from one informer on the namespace; waits on a pod's state or on its deletion. */
class PodStore {
  private readonly informer: k8s.Informer<k8s.V1Pod> & k8s.ObjectCache<k8s.V1Pod>;
  private readonly waiters = new Map<string, Set<() => void>>();
  private readonly deleted = new Set<string>();
  /** UIDs of the pods seen deleted. */
  readonly deletedUids = new Set<string>();
  private stopped = false;

  constructor(
    kc: k8s.KubeConfig,
    private readonly namespace: string,
  ) {
    const core = kc.makeApiClient(k8s.CoreV1Api);
    this.informer = k8s.makeInformer(kc, `/api/v1/namespaces/${namespace}/pods`, () => core.listNamespacedPod({ namespace }));
    const changed = (p: k8s.V1Pod) => this.notify(p.metadata!.name!);
    this.informer.on('add', changed);
    this.informer.on('update', changed);
    this.informer.on('delete', (p) => {
      this.deleted.add(p.metadata!.name!);
      this.deletedUids.add(p.metadata!.uid!);
      changed(p);
    });
    // The informer stops on an error; it lists and watches again a second later.
    this.informer.on('error', () => {
      if (!this.stopped) setTimeout(() => void this.informer.start().catch(() => undefined), 1000);
    });
  }

  start(): Promise<void> {
    return this.informer.start();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.informer.stop();
  }

  get(name: string): k8s.V1Pod | undefined {
    return this.informer.get(name, this.namespace);
  }

  private notify(name: string): void {
    for (const w of this.waiters.get(name) ?? []) w();
  }

  /** Resolves once `ok` holds for `name` (checked at each event of it); rejects after `timeoutMs` or when `signal` aborts. */
  until(name: string, what: string, ok: (p: k8s.V1Pod | undefined) => boolean, timeoutMs: number, signal?: AbortSignal): Promise<k8s.V1Pod | undefined> {
    return new Promise((resolve, reject) => {
      const set = this.waiters.get(name) ?? new Set();
      this.waiters.set(name, set);
      const done = () => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', aborted);
        set.delete(check);
        if (set.size === 0) this.waiters.delete(name);
      };
      const check = () => {
        const p = this.get(name);
        if (ok(p)) {
          done();
          resolve(p);
        }
      };
      const aborted = () => {
        done();
        reject(new AbortError());
      };
      const timer = setTimeout(() => {
        done();
        reject(new Error(`not ${what} after ${timeoutMs / 1000} s: ${describePod(this.get(name))}`));
      }, timeoutMs);
      if (signal?.aborted) return aborted();
      signal?.addEventListener('abort', aborted, { once: true });
      set.add(check);
      check();
    });
  }

  /** Resolves once the watch saw `name` deleted. */
  gone(name: string, timeoutMs: number): Promise<unknown> {
    return this.until(name, 'gone', () => this.deleted.has(name), timeoutMs);
  }
}

class AbortError extends Error {
  constructor() {
    super('the churn ended');
  }
}

/** Phase, reasons and restarts of a pod, for an error message. */
function describePod(p: k8s.V1Pod | undefined): string {
  if (!p) return 'not seen';
  const c = p.status?.containerStatuses?.[0];
  const state = c?.state?.running
    ? 'running'
    : c?.state?.terminated
      ? `terminated ${c.state.terminated.exitCode} ${c.state.terminated.reason ?? ''}`
      : c?.state?.waiting
        ? `waiting ${c.state.waiting.reason ?? ''} ${c.state.waiting.message ?? ''}`
        : 'no container status';
  return `phase ${p.status?.phase ?? '?'}, ${state.trim()}, restarts ${c?.restartCount ?? '?'}${p.metadata?.deletionTimestamp ? ', terminating' : ''}${p.status?.message ? `, ${p.status.message}` : ''}`;
}

const ready = (p: k8s.V1Pod | undefined) => p?.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true;
const main = (p: k8s.V1Pod | undefined) => p?.status?.containerStatuses?.[0];
const failed = (p: k8s.V1Pod | undefined) => p?.status?.phase === 'Failed';

/** The pod of kind `kind` number `n`, pinned to the node. */
function podFor(kind: PodKind, name: string, n: number, o: SoakOptions): k8s.V1Pod {
  const base: k8s.V1PodSpec = {
    nodeSelector: { 'kubernetes.io/hostname': o.node.nodeName },
    tolerations: [WASM_TOLERATION],
    terminationGracePeriodSeconds: 5,
    containers: [],
  };
  const im = o.images;
  const spec: k8s.V1PodSpec = (() => {
    switch (kind) {
      case 'job':
        return { ...base, restartPolicy: 'Never', containers: [{ name: 'main', image: im.hello, args: ['soak', name] }] };
      case 'sleeper':
        return { ...base, restartPolicy: 'Always', containers: [{ name: 'main', image: im.sleep, args: ['3600'] }] };
      case 'crash':
        return { ...base, restartPolicy: 'Always', containers: [{ name: 'main', image: im.exitCode, args: ['1'] }] };
      case 'volume':
        // Every other one on tmpfs (medium: Memory, a mount of its own when nodelet runs as root).
        return {
          ...base,
          restartPolicy: 'Never',
          volumes: [{ name: 'data', emptyDir: n % 2 ? { medium: 'Memory', sizeLimit: '1Mi' } : {} }],
          containers: [{ name: 'main', image: im.writeFile, args: ['/data/out.txt', name], volumeMounts: [{ name: 'data', mountPath: '/data' }] }],
        };
      case 'http':
        return {
          ...base,
          restartPolicy: 'Always',
          containers: [
            {
              name: 'main',
              image: im.http!,
              ports: [{ containerPort: httpPort(n) }],
              env: [{ name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } }],
            },
          ],
        };
    }
  })();
  return { metadata: { name, labels: { soak: kind } }, spec };
}

/** A port per http pod (distinct when the node has no pod network and every pod listens on 127.0.0.1). */
const httpPort = (n: number) => 20_000 + (n % 10_000);

/** How long a sleeper runs before it is deleted: 2-6 s. */
const sleeperHoldMs = (n: number) => 2_000 + (n % 5) * 1_000;

/**
 * Waits for `name` to reach what its kind should (a job and a volume user Succeeded with exit 0, a
 * sleeper Ready and still running after its hold, a crash-looper restarted twice after exit 1, an
 * http pod Ready and answering `hello from <name>`); throws what it saw otherwise.
 */
async function expectState(store: PodStore, kind: PodKind, name: string, n: number, signal: AbortSignal): Promise<void> {
  const until = (what: string, ok: (p: k8s.V1Pod | undefined) => boolean) => store.until(name, what, (p) => ok(p) || failed(p), STATE_TIMEOUT_MS, signal);
  const bad = (p: k8s.V1Pod | undefined, what: string) => new Error(`${what}: ${describePod(p)}`);
  switch (kind) {
    case 'job':
    case 'volume': {
      const p = await until('Succeeded', (x) => x?.status?.phase === 'Succeeded');
      if (p?.status?.phase !== 'Succeeded' || main(p)?.state?.terminated?.exitCode !== 0) throw bad(p, 'expected Succeeded, exit 0');
      return;
    }
    case 'sleeper': {
      const p = await until('Ready', ready);
      if (!ready(p)) throw bad(p, 'expected Ready');
      await new Promise<void>((resolve, reject) => {
        const aborted = () => (clearTimeout(t), reject(new AbortError()));
        const t = setTimeout(() => (signal.removeEventListener('abort', aborted), resolve()), sleeperHoldMs(n));
        signal.addEventListener('abort', aborted, { once: true });
      });
      const q = store.get(name);
      if (!main(q)?.state?.running || main(q)?.restartCount !== 0) throw bad(q, 'expected still running, 0 restarts');
      return;
    }
    case 'crash': {
      const p = await until('restarted twice', (x) => (main(x)?.restartCount ?? 0) >= 2);
      const c = main(p);
      if ((c?.restartCount ?? 0) < 2 || c?.lastState?.terminated?.exitCode !== 1) throw bad(p, 'expected 2 restarts after exit 1');
      return;
    }
    case 'http': {
      const p = await until('Ready', ready);
      if (!ready(p)) throw bad(p, 'expected Ready');
      const ip = p?.status?.podIP && p.status.podIP !== '127.0.0.1' ? p.status.podIP : '127.0.0.1';
      const r = await httpGet(ip, httpPort(n), '/');
      if (r.status !== 200 || r.body !== `hello from ${name}\n`) throw new Error(`GET / answered ${r.status} ${JSON.stringify(r.body.slice(0, 80))}`);
      return;
    }
  }
}

/**
 * Primes the node (one pod of each kind), samples it idle, churns pods for `durationMs` keeping
 * `livePods` alive, deletes them all, samples it idle again and computes the figures.
 */
export async function runSoak(o: SoakOptions): Promise<SoakResult> {
  const log = o.log ?? ((l: string) => console.log(l));
  const live = o.livePods ?? 30;
  const every = o.sampleEveryMs ?? 5_000;
  const core = o.kc.makeApiClient(k8s.CoreV1Api);
  const ns = o.namespace;
  const store = new PodStore(o.kc, ns);
  await store.start();
  const kinds = MIX.map((k) => (k === 'http' && !o.images.http ? 'job' : k));
  const byKind = Object.fromEntries(MIX.map((k) => [k, { created: 0, ok: 0, cutShort: 0 }])) as SoakResult['byKind'];
  const errors: SoakError[] = [];
  let errorCount = 0;
  let cutShort = 0;
  let created = 0;
  let n = 0;
  const uids = new Set<string>();
  const inFlight = new Set<Promise<void>>();
  const ending = new AbortController();
  const runtimePids = new Set<number>();
  const error = (pod: string, kind: PodKind, what: string) => {
    if (o.signal?.aborted) return; // interrupted: what fails now is the interruption's
    errorCount++;
    if (errors.length < 50) errors.push({ pod, kind, what });
    log(`  ! ${pod}: ${what}`);
  };

  /** One pod from create to gone; counts it. */
  const lifecycle = async (kind: PodKind, counted: boolean) => {
    const i = n++;
    const name = `${kind}-${i}`;
    try {
      const p = await core.createNamespacedPod({ namespace: ns, body: podFor(kind, name, i, o) });
      uids.add(p.metadata!.uid!);
    } catch (e) {
      error(name, kind, `create failed: ${String((e as Error).message ?? e).slice(0, 200)}`);
      return;
    }
    if (counted) {
      created++;
      byKind[kind].created++;
    }
    try {
      await expectState(store, kind, name, i, ending.signal);
      if (counted) byKind[kind].ok++;
    } catch (e) {
      if (e instanceof AbortError) {
        cutShort++;
        byKind[kind].cutShort++;
      } else error(name, kind, (e as Error).message);
    }
    try {
      await core.deleteNamespacedPod({ name, namespace: ns });
    } catch (e) {
      if ((e as { code?: number }).code !== 404) error(name, kind, `delete failed: ${String((e as Error).message ?? e).slice(0, 200)}`);
    }
    try {
      await store.gone(name, GONE_TIMEOUT_MS);
    } catch (e) {
      error(name, kind, `stuck: ${(e as Error).message}`);
    }
  };
  const track = (p: Promise<void>) => {
    inFlight.add(p);
    void p.finally(() => inFlight.delete(p));
  };

  const alive = (uid: string) => uids.has(uid) && !store.deletedUids.has(uid);

  // Priming: each kind once (images pulled, the runtime started), then the node idle.
  const t0prime = Date.now();
  await Promise.all([...new Set(kinds)].map((k) => lifecycle(k, false)));
  if (errorCount > 0) throw new Error(`priming failed: ${JSON.stringify(errors)}`);
  const primeIdle = await settled(o.node, undefined, log);
  const baseline = await sampleNode(o.node, 0, 0, 0);
  log(`  primed in ${Math.round((Date.now() - t0prime) / 1000)} s; idle baseline: ${JSON.stringify(baseline)}`);

  // The churn, and the sampler beside it.
  const t0 = Date.now();
  const stopAt = t0 + o.durationMs;
  const samples: SoakSample[] = [];
  const sample = async () => {
    const s = await sampleNode(o.node, (Date.now() - t0) / 1000, created, inFlight.size, alive);
    if (s.runtime) runtimePids.add(s.runtime.pid);
    samples.push(s);
    return s;
  };
  await sample();
  // Every `every` ms from the start (a slow sample delays only itself), until the churn ends.
  const sampling = (async () => {
    for (let i = 1; !ending.signal.aborted; i++) {
      await new Promise((r) => setTimeout(r, Math.max(0, t0 + i * every - Date.now())));
      if (ending.signal.aborted || Date.now() >= stopAt) return;
      const s = await sample();
      if (i % Math.max(1, Math.round(30_000 / every)) === 0)
        log(
          `  ${s.t} s: ${s.pods} pods (${s.live} alive, ${errorCount} errors); nodelet ${s.nodelet?.rssMiB} MiB (heap ${s.heapUsedMiB ?? '?'}) ${s.nodelet?.fds} fds ${s.nodelet?.threads} thr; runtime ${s.runtime?.rssMiB} MiB ${s.runtime?.fds} fds ${s.runtime?.threads} thr; ${s.mounts} mounts, ${s.files} files`,
        );
      if (!s.nodelet) {
        error('-', 'job', 'nodelet exited');
        ending.abort();
      }
    }
  })();
  const stopped = new Promise<void>((r) => {
    const t = setTimeout(r, o.durationMs);
    o.signal?.addEventListener('abort', () => (clearTimeout(t), r()), { once: true });
    ending.signal.addEventListener('abort', () => (clearTimeout(t), r()), { once: true });
  });
  let k = 0;
  while (Date.now() < stopAt && !o.signal?.aborted && !ending.signal.aborted) {
    while (inFlight.size < live) track(lifecycle(kinds[k++ % kinds.length]!, true));
    await Promise.race([stopped, ...inFlight]);
  }
  const churnMs = Date.now() - t0;
  await sample();
  log(`  churn ended after ${Math.round(churnMs / 1000)} s: ${created} pods; deleting the ${inFlight.size} alive`);
  ending.abort();
  await sampling;
  await Promise.all(inFlight);
  const idle = await settled(o.node, baseline, log);
  const after = await sampleNode(o.node, (Date.now() - t0) / 1000, created, 0);
  const leftPaths: string[] = [];
  walk(o.node.rootDir, (p) => {
    if ([...p.matchAll(UID_IN_PATH)].some((m) => uids.has(m[0]))) leftPaths.push(p.slice(o.node.rootDir.length + 1));
  });
  const baseMounts = new Set(primeIdle.mounts);
  const leftMounts = mountsUnder(o.node.rootDir).filter((m) => !baseMounts.has(m));
  await store.stop();

  // The figures: slopes after the warm-up (the later of a fraction of the time and a number of pods,
  // at half the time at the latest).
  const atPods = samples.find((s) => s.pods >= (o.warmupPods ?? 500))?.t ?? Infinity;
  const warmupS = Math.min(Math.max(((o.warmupFraction ?? 0.2) * churnMs) / 1000, atPods), churnMs / 2000);
  const firstAfter = samples.findIndex((s) => s.t >= warmupS);
  const post = firstAfter < 0 ? [] : samples.slice(firstAfter);
  const metrics: Record<string, MetricFigures> = {};
  for (const m of METRICS) {
    const pts = post.map((s) => [s.pods, m.of(s)] as const).filter((x): x is readonly [number, number] => x[1] !== undefined && Number.isFinite(x[1]));
    if (pts.length === 0) continue;
    const ys = pts.map((x) => x[1]);
    const b = m.of(baseline);
    const a = m.of(after);
    metrics[m.name] = {
      unit: m.unit,
      start: ys[0]!,
      end: ys.at(-1)!,
      min: Math.min(...ys),
      max: Math.max(...ys),
      slopePer1000: round3(
        slope(
          pts.map((x) => x[0]),
          ys,
        ) * 1000,
      ),
      floorSlopePer1000: round3(floorSlope(pts) * 1000),
      idleDelta: a !== undefined && b !== undefined ? round1(a - b) : undefined,
    };
  }
  return {
    durationS: Math.round(churnMs / 1000),
    livePods: live,
    podsCreated: created,
    podsPerMinute: Math.round((created / churnMs) * 60_000),
    byKind,
    cutShort,
    errorCount,
    errors,
    warmup: { untilS: post[0]?.t ?? NaN, untilPods: post[0]?.pods ?? NaN },
    baseline,
    after,
    settleMs: idle.ms,
    leftovers: { pathCount: leftPaths.length, paths: leftPaths.sort().slice(0, 50), mounts: leftMounts },
    runtimePids: [...runtimePids],
    metrics,
    samples,
  };
}

/**
 * Waits (up to a minute) until the node is idle: no pod directory under `<root>/pods`, no more mounts
 * than `baseline` and, with a baseline, the runtime's fds back to it; then 2 s more. Returns the time
 * it took and the mounts then.
 */
async function settled(node: SoakNode, baseline: SoakSample | undefined, log: (l: string) => void): Promise<{ ms: number; mounts: string[] }> {
  const t0 = Date.now();
  const podDirs = () => {
    try {
      return readdirSync(join(node.rootDir, 'pods')).length;
    } catch {
      return 0;
    }
  };
  for (;;) {
    const mounts = mountsUnder(node.rootDir).length;
    const fds = procFigures(node.runtimePid())?.fds;
    const idle =
      podDirs() === 0 &&
      (baseline === undefined || (mounts <= baseline.mounts && (fds === undefined || baseline.runtime === undefined || fds <= baseline.runtime.fds)));
    if (idle) break;
    if (Date.now() - t0 > SETTLE_TIMEOUT_MS) {
      log(`  not idle after ${SETTLE_TIMEOUT_MS / 1000} s: ${podDirs()} pod directories, ${mounts} mounts, runtime fds ${fds}`);
      break;
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  const ms = Date.now() - t0;
  await new Promise((r) => setTimeout(r, 2_000));
  return { ms, mounts: mountsUnder(node.rootDir) };
}
