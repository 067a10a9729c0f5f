/** Runs the real `nodelet` command as a child process for e2e tests. */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { unmountUnder } from '../../harness/unmount-under.ts';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { issueNodeCredentials, type ClusterInfo } from '../../cluster/control-plane.ts';
import { nodeBinary } from '../../harness/node-binary.ts';
import { freeListenPort } from '../../harness/ports.ts';
import { startPeer, type Peer } from '../../harness/process.ts';
import { createTestNetwork, type TestHost } from '../../harness/test-network.ts';
import { killWasiRuntime, trackWasiRuntime, wasiRuntimePid } from '../../harness/wasi-runtimes.ts';
import { inject } from 'vitest';
import { adminClients } from './kube.ts';

/** A distinct pod interface per test node (Linux names are at most 15 bytes): `ndl` + a hash of the node name and this process. */
export const podInterfaceFor = (nodeName: string): string => `ndl${createHash('sha256').update(`${process.pid}/${nodeName}`).digest('hex').slice(0, 10)}`;

const BIN = resolve(import.meta.dirname, '..', '..', '..', 'bin', 'nodelet.mjs');
const LOG_KEEP_DIR = resolve(import.meta.dirname, '..', '..', '.cache', 'e2e-logs');

/**
 * How a test node gets its credentials:
 * - `issued` (default): the harness issues its kubeconfig and serving certificate and passes `--client-ca-file`;
 * - `defaults`: only `--kubeconfig` (issued identity), as the README starts nodelet: self-signed serving
 *   certificate, client CA from the kubeconfig;
 * - `bootstrap`: only `--bootstrap-kubeconfig` (the cluster's bootstrap token); nodelet writes
 *   `<root-dir>/kubelet.conf` itself.
 */
export type NodeCredentials = 'issued' | 'defaults' | 'bootstrap';

/** A nodelet started by a test. */
export interface NodeletProcess {
  nodeName: string;
  rootDir: string;
  /** The `--kubeconfig` nodelet uses (written by nodelet itself with `bootstrap` credentials). */
  kubeconfig: string;
  port: number;
  /** The plain-HTTP /healthz port. */
  healthzPort: number;
  peer: Peer;
  logFile: string;
  /** Stops with SIGTERM (the exit code is returned). */
  stop(): Promise<number | null>;
  /** Starts it again with the same root dir and flags, and `moreArgs` from then on. */
  restart(moreArgs?: string[]): Promise<void>;
  /** Stops it and removes its root dir and pod interface. */
  dispose(): Promise<void>;
  /** Sends `signal` and waits until it exited (e.g. `SIGKILL`: a crash), without restarting it. */
  kill(signal: NodeJS.Signals): Promise<void>;
  /** Starts it again after {@link NodeletProcess.kill}. */
  start(): void;
  /** The pid of the external WASI runtime (`NODELET_WASI_RUNTIME=external`), from its pid file. */
  runtimePid(): number | undefined;
}

export { wasiRuntimePid, killWasiRuntime } from '../../harness/wasi-runtimes.ts';

/**
 * Where test nodes run WASI modules when the test does not say (`NODELET_WASI_RUNTIME` in `env`):
 * a node on nodelet's defaults (`defaults` credentials) uses nodelet's default, the external WASI
 * runtime; the others run modules in nodelet's process unless `NODELET_E2E_WASI_RUNTIME=external` is
 * set for the test run (see providers/wasi/README.md, "The runtime process").
 */
export const E2E_WASI_RUNTIME = process.env.NODELET_E2E_WASI_RUNTIME || 'in-process';

/** Where a test node keeps its files, when not in a fresh temporary root dir. */
export interface NodeletPlacement {
  /**
   * A root dir the test made (e.g. a small filesystem of its own); `dispose` unmounts what is
   * mounted at or below it and removes it, as it does its own.
   */
  rootDir?: string;
  /** nodelet's own log (stdout and stderr); default `<root dir>/nodelet.log`. */
  logFile?: string;
  /**
   * A test host (`test/harness/test-network.ts`) to run nodelet in (`nsenter --net`: only the
   * network is the host's, the mounts are the test's): its own network namespace, so its pod
   * bridge and pod IPs are there and never in the machine's root namespace. The
   * control plane's port is forwarded into it, and nodelet's kubelet API and /healthz ports out
   * to 127.0.0.1 of the root namespace, so the node keeps `--node-ip=127.0.0.1` (unless
   * `extraArgs` say otherwise) and the apiserver reaches it as any test node. Other ports nodelet
   * dials on 127.0.0.1 (a registry) the test forwards with `host.forwardOut`.
   */
  host?: TestHost;
}

/**
 * Starts nodelet as node `nodeName` with its own node identity, serving cert and root dir (`env` added
 * to the environment; `NODELET_WASI_RUNTIME` is {@link E2E_WASI_RUNTIME} unless set there or the node
 * is on nodelet's defaults; `placement` a root dir and log file of the test's own).
 */
export async function startNodelet(
  info: ClusterInfo,
  nodeName: string,
  extraArgs: string[] = [],
  credentials: NodeCredentials = 'issued',
  env: NodeJS.ProcessEnv = {},
  placement: NodeletPlacement = {},
): Promise<NodeletProcess> {
  const rootDir = placement.rootDir ?? mkdtempSync(join(tmpdir(), `nodelet-${nodeName}-`));
  trackWasiRuntime(rootDir, inject('wasiRuntimeList'));
  // Below the ephemeral range and never handed out twice: two binds to port 0 in a row can
  // return the same port, and a nodelet given it for both servers fails to start (EADDRINUSE).
  const port = await freeListenPort();
  const healthz = await freeListenPort();
  const logFile = placement.logFile ?? join(rootDir, 'nodelet.log');
  let kubeconfig: string;
  let tlsArgs: string[] = [];
  if (credentials === 'bootstrap') {
    kubeconfig = join(rootDir, 'kubelet.conf');
    tlsArgs = [`--bootstrap-kubeconfig=${info.bootstrapKubeconfig}`];
  } else {
    const creds = issueNodeCredentials(info, nodeName);
    kubeconfig = creds.kubeconfig;
    if (credentials === 'issued') {
      tlsArgs = [`--tls-cert-file=${creds.servingCert}`, `--tls-private-key-file=${creds.servingKey}`, `--client-ca-file=${info.caCert}`];
    }
  }
  // A node on nodelet's defaults keeps the default pod interface (nodelet0): the suite has one such node.
  const podInterface = credentials === 'defaults' ? 'nodelet0' : podInterfaceFor(nodeName);
  const args = [
    BIN,
    `--kubeconfig=${kubeconfig}`,
    `--hostname-override=${nodeName}`,
    '--node-ip=127.0.0.1',
    `--root-dir=${rootDir}`,
    `--port=${port}`,
    '--address=127.0.0.1',
    `--healthz-port=${healthz}`,
    ...(credentials === 'defaults' ? [] : [`--pod-interface=${podInterface}`]),
    ...tlsArgs,
    '--v=2',
    ...extraArgs,
  ];
  const runtime = credentials === 'defaults' ? {} : { NODELET_WASI_RUNTIME: E2E_WASI_RUNTIME };
  const host = placement.host;
  if (host) {
    await host.forwardOut(Number(new URL(info.server).port));
    await host.forwardIn(port);
    await host.forwardIn(healthz);
  }
  const [cmd, argv] = host ? [host.enter[0]!, [...host.enter.slice(1), nodeBinary(), ...args]] : [nodeBinary(), args];
  const launch = () => startPeer(`nodelet-${nodeName}`, cmd, argv, logFile, { env: { ...process.env, ...runtime, ...env } });
  const addArgs = (more: string[]) => argv.push(...more);
  const np: NodeletProcess = {
    nodeName,
    rootDir,
    kubeconfig,
    port,
    healthzPort: healthz,
    logFile,
    peer: launch(),
    async stop() {
      const proc = np.peer.proc;
      if (proc.exitCode !== null) return proc.exitCode;
      await np.peer.stop('SIGTERM', 60_000);
      return proc.exitCode;
    },
    async restart(moreArgs = []) {
      await np.stop();
      addArgs(moreArgs);
      np.peer = launch();
    },
    async kill(signal) {
      await np.peer.stop(signal, 60_000);
    },
    start() {
      np.peer = launch();
    },
    runtimePid: () => wasiRuntimePid(rootDir),
    async dispose() {
      await np.peer.stop('SIGTERM', 30_000);
      // An external WASI runtime outlives nodelet on purpose: the test machine does not keep it.
      await killWasiRuntime(rootDir);
      // Keep the log for post-mortems of CI runs (test/.cache is git-ignored).
      mkdirSync(LOG_KEEP_DIR, { recursive: true });
      copyFileSync(logFile, join(LOG_KEEP_DIR, `${nodeName}-${Date.now()}.log`));
      // nodelet keeps its tmpfs volume mounts when it stops (as upstream does); the test machine does not.
      unmountUnder(rootDir);
      rmSync(rootDir, { recursive: true, force: true });
      // nodelet keeps its pod bridge across restarts (as upstream keeps cni0); the test machine does not
      // (a test host's goes with its namespace).
      if (!host) await new Promise((done) => execFile('ip', ['link', 'del', podInterface], () => done(undefined)));
      // A stopped node looks Ready until the node-lifecycle grace period ends; remove it so
      // the scheduler cannot bind later test files' pods to it.
      await adminClients(info)
        .core.deleteNode({ name: nodeName })
        .catch(() => undefined);
    },
  };
  return np;
}

/** Options of {@link startIsolatedNodelet}. */
export interface IsolatedNodeletOptions {
  extraArgs?: string[];
  credentials?: NodeCredentials;
  env?: NodeJS.ProcessEnv;
  /** Ports of the root namespace's 127.0.0.1 nodelet dials besides the apiserver's (a registry's, a test server's). */
  forward?: number[];
}

/**
 * Starts nodelet as {@link startNodelet} does, on a test host of its own (a fresh
 * `test/harness/test-network.ts` network with one namespace): its pod IPs exist only there, and
 * the test reaches them through `host` (`host.httpGet`, `host.dial`), from inside the namespace.
 * `dispose` also removes the namespace. The caller skips where `netnsUnavailable()` says why.
 */
export async function startIsolatedNodelet(info: ClusterInfo, nodeName: string, o: IsolatedNodeletOptions = {}): Promise<NodeletProcess & { host: TestHost }> {
  const net = createTestNetwork();
  try {
    const host = await net.addHost(nodeName);
    for (const port of o.forward ?? []) await host.forwardOut(port);
    const np = await startNodelet(info, nodeName, o.extraArgs, o.credentials, o.env, { host });
    const dispose = np.dispose;
    return Object.assign(np, {
      host,
      async dispose() {
        await dispose();
        await net.dispose();
      },
    });
  } catch (e) {
    await net.dispose();
    throw e;
  }
}
