/** Runs the real `nodelet` command as a child process for e2e tests. */
import { copyFileSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { issueNodeCredentials, type ClusterInfo } from '../../cluster/control-plane.ts';
import { nodeBinary } from '../../harness/node-binary.ts';
import { freePort } from '../../harness/ports.ts';
import { startPeer, type Peer } from '../../harness/process.ts';
import { adminClients } from './kube.ts';

const BIN = resolve(import.meta.dirname, '..', '..', '..', 'bin', 'nodelet.mjs');
const LOG_KEEP_DIR = resolve(import.meta.dirname, '..', '..', '.cache', 'e2e-logs');

/** A nodelet started by a test. */
export interface NodeletProcess {
  nodeName: string;
  rootDir: string;
  port: number;
  peer: Peer;
  logFile: string;
  /** Stops with SIGTERM (the exit code is returned). */
  stop(): Promise<number | null>;
  /** Starts it again with the same root dir and flags. */
  restart(): Promise<void>;
  /** Stops it and removes its root dir. */
  dispose(): Promise<void>;
}

/** Starts nodelet as node `nodeName` with its own node identity, serving cert and root dir. */
export async function startNodelet(info: ClusterInfo, nodeName: string, extraArgs: string[] = []): Promise<NodeletProcess> {
  const rootDir = mkdtempSync(join(tmpdir(), `nodelet-${nodeName}-`));
  const creds = issueNodeCredentials(info, nodeName);
  const port = await freePort();
  const healthz = await freePort();
  const logFile = join(rootDir, 'nodelet.log');
  const args = [BIN, `--kubeconfig=${creds.kubeconfig}`, `--hostname-override=${nodeName}`, '--node-ip=127.0.0.1',
    `--root-dir=${rootDir}`, `--port=${port}`, '--address=127.0.0.1', `--healthz-port=${healthz}`,
    `--tls-cert-file=${creds.servingCert}`, `--tls-private-key-file=${creds.servingKey}`, `--client-ca-file=${info.caCert}`,
    '--v=2', ...extraArgs];
  const launch = () => startPeer(`nodelet-${nodeName}`, nodeBinary(), args, logFile);
  const np: NodeletProcess = {
    nodeName, rootDir, port, logFile, peer: launch(),
    async stop() {
      const proc = np.peer.proc;
      if (proc.exitCode !== null) return proc.exitCode;
      await np.peer.stop('SIGTERM', 60_000);
      return proc.exitCode;
    },
    async restart() { await np.stop(); np.peer = launch(); },
    async dispose() {
      await np.peer.stop('SIGTERM', 30_000);
      // Keep the log for post-mortems of CI runs (test/.cache is git-ignored).
      mkdirSync(LOG_KEEP_DIR, { recursive: true });
      copyFileSync(logFile, join(LOG_KEEP_DIR, `${nodeName}-${Date.now()}.log`));
      rmSync(rootDir, { recursive: true, force: true });
      // A stopped node looks Ready until the node-lifecycle grace period ends; remove it so
      // the scheduler cannot bind later test files' pods to it.
      await adminClients(info).core.deleteNode({ name: nodeName }).catch(() => undefined);
    },
  };
  return np;
}
