/**
 * kubemark's hollow node as a harness peer: the upstream kubelet
 * (k8s.io/kubernetes/cmd/kubemark v1.36.3, `--morph=kubelet`) with a fake CRI
 * runtime and fake image service, registered as a Node on a harness control
 * plane with its own node identity (`system:node:<name>`, so NodeRestriction
 * and the Node authorizer apply to it as to nodelet).
 *
 *   const hollow = await startHollowNode(info, 'hollow-1');  // resolves when the Node is Ready
 *   // pods tolerating HOLLOW_TAINT with nodeName/nodeSelector → Running (no process runs)
 *   await hollow.stop();                                     // SIGTERM, then deletes the Node
 *
 * Config (what the bench compares against, see bench/README.md): upstream
 * kubelet defaults from kubemark's GetHollowKubeletConfig (sync 10 s, node
 * status every 10 s, projected service-account token volumes and events as
 * the real kubelet does them), except client QPS/burst raised to the real
 * kubelet's defaults 50/100 (kubemark's own defaults are 10/20).
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { eventually, startPeer, type Peer } from '../harness/process.ts';
import { freeListenPort } from '../harness/ports.ts';
import { issueNodeCredentials, type ClusterInfo } from './control-plane.ts';

const here = dirname(fileURLToPath(import.meta.url));

/** The taint a hollow node registers with, so only pods meant for it land there. */
export const HOLLOW_TAINT = { key: 'nodelet.dev/hollow-node', value: 'true', effect: 'NoSchedule' } as const;

let binary: string | undefined;

/** Builds (or finds cached) kubemark with build-kubemark.sh; returns its path. Cold: ~4 min. */
export function buildKubemark(): string {
  if (binary) return binary;
  const out = execFileSync('bash', [join(here, 'build-kubemark.sh')], { stdio: ['ignore', 'pipe', 'inherit'], encoding: 'utf8' });
  const m = /^kubemark=(\/.+)$/m.exec(out);
  if (!m) throw new Error(`build-kubemark.sh did not report kubemark:\n${out}`);
  binary = m[1]!;
  return binary;
}

/** Options of {@link startHollowNode}. */
export interface HollowNodeOptions {
  /** `--max-pods` (default 110). */
  readonly maxPods?: number;
  /** `--kube-api-qps` (default 50, the real kubelet's default; kubemark's own is 10). */
  readonly qps?: number;
  /** `--kube-api-burst` (default 100, the real kubelet's default; kubemark's own is 20). */
  readonly burst?: number;
  /** Extra node labels. */
  readonly labels?: Record<string, string>;
  /** How long to wait for the Node to be Ready (default 120 s). */
  readonly readyTimeoutMs?: number;
  /** The directory under which its data dir (its TMPDIR, where kubemark keeps the kubelet's root) is made (default the temporary directory). */
  readonly dataBase?: string;
  /**
   * Resolve once kubemark runs, without waiting for the Node to be Ready (default false): a caller
   * starting many hollow nodes waits for all of them with one list instead of a poll each.
   */
  readonly noWait?: boolean;
}

/** A running hollow node. */
export interface HollowNode {
  /** The Node's name. */
  readonly name: string;
  /** The kubemark process. */
  readonly peer: Peer;
  /** kubemark's stdout+stderr. */
  readonly logFile: string;
  /** The last `n` lines of its log. */
  logTail(n?: number): string;
  /** SIGTERM, delete the Node object, remove its temp dir. */
  stop(): Promise<void>;
}

/** Starts a hollow node called `name` on the control plane `info`; resolves once its Node is Ready (unless `opts.noWait`). */
export async function startHollowNode(info: ClusterInfo, name: string, opts: HollowNodeOptions = {}): Promise<HollowNode> {
  const bin = buildKubemark();
  const dir = mkdtempSync(join(opts.dataBase ?? tmpdir(), `nodelet-hollow-${name}-`));
  const { kubeconfig } = issueNodeCredentials(info, name);
  const labels = Object.entries(opts.labels ?? {})
    .map(([k, v]) => `${k}=${v}`)
    .join(',');
  const args = [
    '--morph=kubelet',
    `--name=${name}`,
    `--kubeconfig=${kubeconfig}`,
    `--kubelet-port=${await freeListenPort()}`,
    '--kubelet-read-only-port=0',
    '--use-host-image-service=false',
    `--max-pods=${opts.maxPods ?? 110}`,
    `--kube-api-qps=${opts.qps ?? 50}`,
    `--kube-api-burst=${opts.burst ?? 100}`,
    `--register-with-taints=${HOLLOW_TAINT.key}=${HOLLOW_TAINT.value}:${HOLLOW_TAINT.effect}`,
    ...(labels ? [`--node-labels=${labels}`] : []),
    `--cert-dir=${join(dir, 'certs')}`,
    '--v=2',
  ];
  const logFile = join(dir, 'kubemark.log');
  // kubemark makes its kubelet root dir with os.MkdirTemp: keep it inside `dir`.
  const peer = startPeer(`hollow-${name}`, bin, args, logFile, { env: { ...process.env, TMPDIR: dir }, cwd: dir });
  const logTail = (n = 20) => {
    try {
      return readFileSync(logFile, 'utf8').split('\n').slice(-n).join('\n');
    } catch {
      return '';
    }
  };
  const kubectl = (...a: string[]) =>
    execFileSync(join(info.binDir, 'kubectl'), [`--kubeconfig=${info.adminKubeconfig}`, ...a], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  const stop = async () => {
    await peer.stop('SIGTERM', 10_000);
    try {
      kubectl('delete', 'node', name, '--ignore-not-found', '--wait=false');
    } catch {
      /* the cluster may be gone */
    }
    rmSync(dir, { recursive: true, force: true });
  };
  if (opts.noWait) return { name, peer, logFile, logTail, stop };
  try {
    const how = await eventually(
      `hollow node ${name} Ready`,
      () => {
        if (peer.proc.exitCode !== null || peer.proc.signalCode !== null) return `exited (${peer.proc.exitCode ?? peer.proc.signalCode})`;
        return kubectl('get', 'node', name, '-o', 'jsonpath={.status.conditions[?(@.type=="Ready")].status}') === 'True' && 'ready';
      },
      opts.readyTimeoutMs ?? 120_000,
      500,
    );
    if (how !== 'ready') throw new Error(`kubemark ${how} before its Node was Ready`);
  } catch (e) {
    const tail = logTail(30);
    await stop();
    throw new Error(`${(e as Error).message}; kubemark log tail:\n${tail}`);
  }
  return { name, peer, logFile, logTail, stop };
}
