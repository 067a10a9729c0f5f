/**
 * `npm run cluster -- up|down|env|build|node NAME`: a real control plane for people.
 * `up` leaves it running in the background and prints `export KUBECONFIG=...`;
 * `node NAME` issues node NAME's identity (client cert in group system:nodes,
 * serving cert) and prints the nodelet flags that use it.
 */
import { existsSync, readFileSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { until } from '../harness/until.ts';
import { buildControlPlane, issueNodeCredentials, startControlPlane, type ClusterInfo } from './control-plane.ts';

const stateFile = join(dirname(fileURLToPath(import.meta.url)), '..', '.cache', 'cluster', 'current.json');

function readState(): ClusterInfo | undefined {
  return existsSync(stateFile) ? (JSON.parse(readFileSync(stateFile, 'utf8')) as ClusterInfo) : undefined;
}

function printEnv(info: ClusterInfo): void {
  console.log(`export KUBECONFIG=${info.adminKubeconfig}`);
  console.log(`export PATH=${info.binDir}:$PATH`);
  console.log(`export BOOTSTRAP_KUBECONFIG=${info.bootstrapKubeconfig}`);
  console.log(`# logs: ${info.dir}/*.log`);
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function down(): Promise<void> {
  const info = readState();
  if (!info) {
    console.error('no cluster is up');
    return;
  }
  for (const pid of Object.values(info.pids).reverse()) if (alive(pid)) process.kill(pid, 'SIGTERM');
  // Up to 10 s for a clean exit; what is left then is killed.
  await until('the control plane processes to exit', () => !Object.values(info.pids).some(alive), 10_000).catch(() => undefined);
  for (const pid of Object.values(info.pids)) if (alive(pid)) process.kill(pid, 'SIGKILL');
  rmSync(info.dir, { recursive: true, force: true });
  rmSync(stateFile, { force: true });
  console.error('control plane stopped');
}

async function main(cmd = 'up', arg?: string): Promise<number> {
  switch (cmd) {
    case 'node': {
      const s = readState();
      if (!s) {
        console.error('no cluster is up: run `npm run cluster -- up`');
        return 1;
      }
      if (!arg || !/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/.test(arg)) {
        console.error('usage: npm run cluster -- node <node-name>');
        return 2;
      }
      const c = issueNodeCredentials(s, arg);
      console.log(
        `--kubeconfig=${c.kubeconfig} --hostname-override=${arg} --tls-cert-file=${c.servingCert} --tls-private-key-file=${c.servingKey} --client-ca-file=${s.caCert}`,
      );
      return 0;
    }
    case 'build':
      console.log(buildControlPlane());
      return 0;
    case 'env': {
      const s = readState();
      if (!s) {
        console.error('no cluster is up: run `npm run cluster -- up`');
        return 1;
      }
      printEnv(s);
      return 0;
    }
    case 'down':
      await down();
      return 0;
    case 'up': {
      const s = readState();
      if (s && Object.values(s.pids).every(alive)) {
        printEnv(s);
        return 0;
      }
      if (s) await down();
      // Like kubeadm: kubelet serving certificates are not verified, so nodes on their defaults
      // (a self-signed kubelet.crt) serve `kubectl logs`.
      const { info } = await startControlPlane({ detached: true, verifyKubelets: false });
      mkdirSync(dirname(stateFile), { recursive: true });
      writeFileSync(stateFile, JSON.stringify(info, null, 2));
      printEnv(info);
      return 0;
    }
    default:
      console.error(`usage: npm run cluster -- up|down|env|build|node NAME (got "${cmd}")`);
      return 2;
  }
}

process.exitCode = await main(process.argv[2], process.argv[3]);
