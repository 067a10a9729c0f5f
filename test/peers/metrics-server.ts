/**
 * The real metrics-server (sigs.k8s.io/metrics-server v0.9.0) beside the test
 * control plane, as a cluster admin installs it, minus the Deployment:
 *
 * - ServiceAccount kube-system/metrics-server with upstream's RBAC
 *   (ClusterRole system:metrics-server: nodes/metrics, pods and nodes;
 *   system:auth-delegator; the extension-apiserver-authentication-reader Role);
 * - a process running with a kubeconfig holding that service account's token
 *   (so it calls kubelets with the token: the TokenReview path of nodelet);
 * - APIService v1beta1.metrics.k8s.io → Service kube-system/metrics-server
 *   without selector → an EndpointSlice with the host's address and the
 *   process's port (`--enable-aggregator-routing` on the apiserver; the
 *   apiserver refuses loopback addresses in EndpointSlices).
 */
import { execFileSync } from 'node:child_process';
import { networkInterfaces } from 'node:os';
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ClusterInfo } from '../cluster/control-plane.ts';
import { freePort } from '../harness/ports.ts';
import { startPeer, waitFor, type Peer } from '../harness/process.ts';

const here = dirname(fileURLToPath(import.meta.url));

/** Builds (or finds cached) the metrics-server binary; returns its path. */
export function buildMetricsServer(): string {
  return execFileSync('bash', [join(here, 'build-metrics-server.sh')], { stdio: ['ignore', 'pipe', 'inherit'], encoding: 'utf8' })
    .trim()
    .split('\n')
    .pop()!;
}

/** The first non-internal IPv4 address of this host. */
export function hostIPv4(): string {
  for (const addrs of Object.values(networkInterfaces())) {
    for (const a of addrs ?? []) if (a.family === 'IPv4' && !a.internal) return a.address;
  }
  throw new Error('no non-loopback IPv4 address: the aggregation layer cannot reach metrics-server');
}

const RBAC = `
apiVersion: v1
kind: ServiceAccount
metadata: {name: metrics-server, namespace: kube-system}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: system:metrics-server}
rules:
- apiGroups: [""]
  resources: [nodes/metrics]
  verbs: [get]
- apiGroups: [""]
  resources: [pods, nodes]
  verbs: [get, list, watch]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: system:metrics-server}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: system:metrics-server}
subjects: [{kind: ServiceAccount, name: metrics-server, namespace: kube-system}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: metrics-server:system:auth-delegator}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: system:auth-delegator}
subjects: [{kind: ServiceAccount, name: metrics-server, namespace: kube-system}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: metrics-server-auth-reader, namespace: kube-system}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: extension-apiserver-authentication-reader}
subjects: [{kind: ServiceAccount, name: metrics-server, namespace: kube-system}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: system:aggregated-metrics-reader
  labels: {rbac.authorization.k8s.io/aggregate-to-view: "true", rbac.authorization.k8s.io/aggregate-to-edit: "true", rbac.authorization.k8s.io/aggregate-to-admin: "true"}
rules:
- apiGroups: [metrics.k8s.io]
  resources: [pods, nodes]
  verbs: [get, list, watch]
`;

function registration(ip: string, port: number): string {
  return `
apiVersion: v1
kind: Service
metadata: {name: metrics-server, namespace: kube-system}
spec:
  ports: [{name: https, port: 443, protocol: TCP, targetPort: ${port}}]
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  name: metrics-server-host
  namespace: kube-system
  labels: {kubernetes.io/service-name: metrics-server, endpointslice.kubernetes.io/managed-by: nodelet-test-harness}
addressType: IPv4
endpoints: [{addresses: ["${ip}"], conditions: {ready: true}}]
ports: [{name: https, port: ${port}, protocol: TCP}]
---
apiVersion: apiregistration.k8s.io/v1
kind: APIService
metadata: {name: v1beta1.metrics.k8s.io}
spec:
  service: {name: metrics-server, namespace: kube-system, port: 443}
  group: metrics.k8s.io
  version: v1beta1
  insecureSkipTLSVerify: true
  groupPriorityMinimum: 100
  versionPriority: 100
`;
}

/** Options of {@link startMetricsServer}. */
export interface MetricsServerOptions {
  /** `--metric-resolution` (metrics-server's minimum is 10s). */
  readonly resolution?: string;
  /** Verify kubelet serving certificates with the cluster CA (else `--kubelet-insecure-tls`). */
  readonly verifyKubeletCa?: boolean;
}

/** A running metrics-server and how to remove it. */
export interface RunningMetricsServer {
  readonly peer: Peer;
  readonly port: number;
  /** Stops the process and removes the APIService (so later discovery does not see a dead group). */
  stop(): Promise<void>;
}

/** Installs the RBAC and registration, then starts metrics-server as a process. */
export async function startMetricsServer(info: ClusterInfo, o: MetricsServerOptions = {}): Promise<RunningMetricsServer> {
  const bin = buildMetricsServer();
  const kubectl = (args: string[], input?: string) =>
    execFileSync(join(info.binDir, 'kubectl'), [`--kubeconfig=${info.adminKubeconfig}`, ...args], {
      input,
      encoding: 'utf8',
      stdio: ['pipe', 'pipe', 'pipe'],
      timeout: 60_000,
    });
  kubectl(['apply', '-f', '-'], RBAC);
  const token = kubectl(['-n', 'kube-system', 'create', 'token', 'metrics-server', '--duration=2h']).trim();
  const dir = join(info.dir, 'metrics-server');
  mkdirSync(dir, { recursive: true });
  const kubeconfig = join(dir, 'kubeconfig');
  writeFileSync(
    kubeconfig,
    [
      'apiVersion: v1',
      'kind: Config',
      'clusters:',
      '- name: c',
      '  cluster:',
      `    server: ${info.server}`,
      `    certificate-authority: ${info.caCert}`,
      'users:',
      '- name: metrics-server',
      '  user:',
      `    token: ${token}`,
      'contexts:',
      '- name: c',
      '  context: {cluster: c, user: metrics-server}',
      'current-context: c',
      '',
    ].join('\n'),
    { mode: 0o600 },
  );
  const ip = hostIPv4();
  const port = await freePort();
  const peer = startPeer(
    'metrics-server',
    bin,
    [
      `--kubeconfig=${kubeconfig}`,
      `--authentication-kubeconfig=${kubeconfig}`,
      `--authorization-kubeconfig=${kubeconfig}`,
      `--bind-address=${ip}`,
      `--secure-port=${port}`,
      `--cert-dir=${join(dir, 'pki')}`,
      '--kubelet-preferred-address-types=InternalIP',
      '--kubelet-use-node-status-port',
      // metrics-server panics unless the resolution is longer than the request timeout (default 10s).
      `--metric-resolution=${o.resolution ?? '10s'}`,
      '--kubelet-request-timeout=5s',
      ...(o.verifyKubeletCa ? [`--kubelet-certificate-authority=${info.caCert}`] : ['--kubelet-insecure-tls']),
      '--v=2',
    ],
    join(dir, 'metrics-server.log'),
  );
  kubectl(['apply', '-f', '-'], registration(ip, port));
  await waitFor(
    'APIService v1beta1.metrics.k8s.io Available',
    () => {
      if (peer.proc.exitCode !== null) {
        throw new Error(`metrics-server exited (${peer.proc.exitCode}): ${readFileSync(peer.logFile, 'utf8').split('\n').slice(-5).join(' | ')}`);
      }
      try {
        return kubectl(['get', 'apiservice', 'v1beta1.metrics.k8s.io', '-o', 'jsonpath={.status.conditions[?(@.type=="Available")].status}']) === 'True';
      } catch {
        return false;
      }
    },
    90_000,
    1000,
  );
  return {
    peer,
    port,
    async stop() {
      await peer.stop('SIGTERM', 10_000);
      // Keep the log for post-mortems (test/.cache is git-ignored; the cluster dir is removed).
      const keep = join(here, '..', '.cache', 'e2e-logs');
      mkdirSync(keep, { recursive: true });
      copyFileSync(peer.logFile, join(keep, `metrics-server-${Date.now()}.log`));
      try {
        kubectl(['delete', 'apiservice', 'v1beta1.metrics.k8s.io', '--ignore-not-found']);
      } catch {
        /* cluster going away */
      }
    },
  };
}
