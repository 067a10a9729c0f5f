/**
 * A real Kubernetes control plane for tests: etcd, kube-apiserver,
 * kube-controller-manager and kube-scheduler built from pinned Go modules
 * (test/cluster/go), run as local processes on 127.0.0.1 with free ports.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createCa, issue, writeKubeconfig, type Pki } from './pki.ts';
import { freePort } from '../harness/ports.ts';
import { startPeer, waitFor, type Peer } from '../harness/process.ts';

const here = dirname(fileURLToPath(import.meta.url));

/** Builds (or finds cached) binaries; returns their directory. */
export function buildControlPlane(): string {
  const out = execFileSync('bash', [join(here, 'build.sh')], { stdio: ['ignore', 'pipe', 'inherit'], encoding: 'utf8' });
  return out.trim().split('\n').pop()!;
}

/** What a running control plane offers to tests (serialisable: written to state.json). */
export interface ClusterInfo {
  dir: string;
  binDir: string;
  server: string;
  adminKubeconfig: string;
  caCert: string;
  caKey: string;
  /** The apiserver's client cert for talking to kubelets (its CA is `caCert`). */
  kubeletClientCert: string;
  kubeletClientKey: string;
  /** etcd's client URL (for a second apiserver on the same cluster). */
  etcdUrl: string;
  /** A bootstrap token (`<id>.<secret>`, group system:bootstrappers) and a kubeconfig that uses it. */
  bootstrapToken: string;
  bootstrapKubeconfig: string;
  /** The controller-manager's `--cluster-signing-duration`. */
  clusterSigningDuration: string;
  /** The controller-manager's `--cluster-cidr`: each node gets a /24 of it (`nodeCidrMaskSize`) as `spec.podCIDR`. */
  clusterCIDR: string;
  pids: Record<string, number>;
}

/** Options for {@link startControlPlane}. */
export interface StartOptions {
  /** Keep the processes running after this process exits (`npm run cluster -- up`). */
  detached?: boolean;
  /** node-monitor-grace-period of the controller-manager (upstream default 50s). */
  nodeMonitorGracePeriod?: string;
  /** The controller-manager's `--node-cidr-mask-size` (default 24: 253 pod IPs per node; the bench's 500 pods need 22). */
  nodeCidrMaskSize?: number;
  /** Lifetime of certificates the controller-manager signs for CSRs (upstream default 8760h0m0s). */
  clusterSigningDuration?: string;
  /** Verify kubelet serving certificates against the cluster CA (`--kubelet-certificate-authority`); default true. */
  verifyKubelets?: boolean;
}

/** The feature gates of kube-apiserver and kube-controller-manager: pod certificates (KEP-4317; beta in 1.35, off by default). */
const FEATURE_GATES = 'PodCertificateRequest=true';

/**
 * kube-apiserver flags. `verifyKubelets` adds `--kubelet-certificate-authority`
 * (the harness's default); without it the apiserver does not verify kubelet
 * serving certificates, as on a kubeadm cluster. Pod certificates are on: the
 * gate and the certificates.k8s.io/v1beta1 API, which serves nothing else
 * without other gates (ClusterTrustBundle stays off).
 */
function apiserverArgs(pkiDir: string, etcdUrl: string, port: number, verifyKubelets: boolean): string[] {
  const f = (n: string) => join(pkiDir, n);
  return [
    `--etcd-servers=${etcdUrl}`,
    '--bind-address=127.0.0.1',
    '--advertise-address=127.0.0.1',
    `--secure-port=${port}`,
    `--tls-cert-file=${f('apiserver.crt')}`,
    `--tls-private-key-file=${f('apiserver.key')}`,
    `--client-ca-file=${f('ca.crt')}`,
    '--service-account-issuer=https://kubernetes.default.svc.cluster.local',
    `--service-account-key-file=${f('sa.pub')}`,
    `--service-account-signing-key-file=${f('sa.key')}`,
    '--authorization-mode=Node,RBAC',
    '--enable-admission-plugins=NodeRestriction',
    `--feature-gates=${FEATURE_GATES}`,
    '--runtime-config=certificates.k8s.io/v1beta1=true',
    // PodResizeValidator (on by default since 1.35) refuses every resize on a node whose kubernetes.io/os is not linux,
    // as nodelet's WASI nodes are (wasi): docs/resize.md, "The apiserver's PodResizeValidator".
    '--disable-admission-plugins=PodResizeValidator',
    '--enable-bootstrap-token-auth=true',
    '--service-cluster-ip-range=10.0.0.0/24',
    '--allow-privileged=true',
    `--kubelet-client-certificate=${f('apiserver-kubelet-client.crt')}`,
    `--kubelet-client-key=${f('apiserver-kubelet-client.key')}`,
    ...(verifyKubelets ? [`--kubelet-certificate-authority=${f('ca.crt')}`] : []),
    '--kubelet-preferred-address-types=InternalIP,Hostname',
    `--requestheader-client-ca-file=${f('ca.crt')}`,
    '--requestheader-allowed-names=front-proxy-client',
    '--requestheader-username-headers=X-Remote-User',
    '--requestheader-group-headers=X-Remote-Group',
    '--requestheader-extra-headers-prefix=X-Remote-Extra-',
    `--proxy-client-cert-file=${f('front-proxy-client.crt')}`,
    `--proxy-client-key-file=${f('front-proxy-client.key')}`,
    '--enable-aggregator-routing=true',
    '--profiling=false',
    '--v=1',
  ];
}

/** A bootstrap token, its Secret, and upstream's (kubeadm's) bindings for TLS bootstrap and client certificate rotation. */
function bootstrapManifest(id: string, secret: string): string {
  const crb = (name: string, role: string, group: string) =>
    [
      '---',
      'apiVersion: rbac.authorization.k8s.io/v1',
      'kind: ClusterRoleBinding',
      `metadata: {name: ${name}}`,
      `roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: "${role}"}`,
      `subjects: [{apiGroup: rbac.authorization.k8s.io, kind: Group, name: "${group}"}]`,
    ].join('\n');
  return [
    'apiVersion: v1',
    'kind: Secret',
    'type: bootstrap.kubernetes.io/token',
    `metadata: {name: bootstrap-token-${id}, namespace: kube-system}`,
    'stringData:',
    '  description: "nodelet test cluster: TLS bootstrap"',
    `  token-id: ${JSON.stringify(id)}`,
    `  token-secret: ${JSON.stringify(secret)}`,
    '  usage-bootstrap-authentication: "true"',
    '  usage-bootstrap-signing: "true"',
    crb('kubelet-bootstrap', 'system:node-bootstrapper', 'system:bootstrappers'),
    crb('node-autoapprove-bootstrap', 'system:certificates.k8s.io:certificatesigningrequests:nodeclient', 'system:bootstrappers'),
    crb('node-autoapprove-certificate-rotation', 'system:certificates.k8s.io:certificatesigningrequests:selfnodeclient', 'system:nodes'),
    '',
  ].join('\n');
}

/** Writes a kubeconfig that authenticates with a bearer token. */
function tokenKubeconfig(path: string, server: string, caCert: string, token: string): string {
  writeFileSync(
    path,
    [
      'apiVersion: v1',
      'kind: Config',
      'clusters:',
      '- name: nodelet-test',
      '  cluster:',
      `    server: ${server}`,
      `    certificate-authority: ${caCert}`,
      'users:',
      '- name: kubelet-bootstrap',
      '  user:',
      `    token: ${token}`,
      'contexts:',
      '- name: nodelet-test',
      '  context:',
      '    cluster: nodelet-test',
      '    user: kubelet-bootstrap',
      'current-context: nodelet-test',
      '',
    ].join('\n'),
    { mode: 0o600 },
  );
  return path;
}

/** A GET with an optional client certificate or bearer token; resolves to the status code and body. */
export function httpsGet(
  url: string,
  tls: { ca: string; cert?: string; key?: string; token?: string },
  timeoutMs = 5000,
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        ca: readFileSync(tls.ca),
        timeout: timeoutMs,
        ...(tls.cert && tls.key ? { cert: readFileSync(tls.cert), key: readFileSync(tls.key) } : {}),
        headers: tls.token ? { authorization: `Bearer ${tls.token}` } : {},
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c) => (body += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on('error', reject);
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.end();
  });
}

function clientKubeconfig(pki: Pki, server: string, name: string, cn: string, orgs: string[] = []): string {
  const c = issue(pki, { name, cn, orgs, usage: 'client' });
  return writeKubeconfig(join(pki.dir, `${name}.kubeconfig`), server, pki, c, cn);
}

async function startEtcd(binDir: string, dir: string, detached: boolean): Promise<{ peer: Peer; url: string }> {
  const [client, peerPort] = [await freePort(), await freePort()];
  const url = `http://127.0.0.1:${client}`;
  const peer = startPeer(
    'etcd',
    join(binDir, 'etcd'),
    [
      '--name=test',
      `--data-dir=${join(dir, 'etcd')}`,
      `--listen-client-urls=${url}`,
      `--advertise-client-urls=${url}`,
      `--listen-peer-urls=http://127.0.0.1:${peerPort}`,
      `--initial-advertise-peer-urls=http://127.0.0.1:${peerPort}`,
      `--initial-cluster=test=http://127.0.0.1:${peerPort}`,
      '--unsafe-no-fsync=true',
      '--log-level=warn',
    ],
    join(dir, 'etcd.log'),
    { detached },
  );
  await waitFor('etcd health', async () => (await fetch(`${url}/health`)).ok, 30_000);
  return { peer, url };
}

/** Starts etcd, kube-apiserver, kube-controller-manager and kube-scheduler. */
export async function startControlPlane(opts: StartOptions = {}): Promise<{ info: ClusterInfo; peers: Peer[] }> {
  const binDir = buildControlPlane();
  const dir = mkdtempSync(join(tmpdir(), 'nodelet-cluster-'));
  const detached = opts.detached ?? false;
  const pki = createCa(join(dir, 'pki'));
  const apiPort = await freePort();
  const server = `https://127.0.0.1:${apiPort}`;
  issue(pki, {
    name: 'apiserver',
    cn: 'kube-apiserver',
    usage: 'server',
    dnsNames: ['localhost', 'kubernetes', 'kubernetes.default', 'kubernetes.default.svc', 'kubernetes.default.svc.cluster.local'],
    ips: ['127.0.0.1', '10.0.0.1'],
  });
  // As kubeadm: the apiserver's kubelet client is no superuser; a ClusterRoleBinding grants it
  // system:kubelet-api-admin (below), which the kubelets' Webhook authorizer checks.
  const kubeletClient = issue(pki, { name: 'apiserver-kubelet-client', cn: KUBELET_CLIENT_USER, usage: 'client' });
  // The aggregation layer's front proxy (kubeadm's front-proxy-client; one CA here).
  issue(pki, { name: 'front-proxy-client', cn: 'front-proxy-client', usage: 'client' });
  const admin = clientKubeconfig(pki, server, 'admin', 'kubernetes-admin', ['system:masters']);
  const cm = clientKubeconfig(pki, server, 'controller-manager', 'system:kube-controller-manager');
  const sched = clientKubeconfig(pki, server, 'scheduler', 'system:kube-scheduler');
  const [tokenId, tokenSecret] = [randomBytes(3).toString('hex'), randomBytes(8).toString('hex')];
  const bootstrapKubeconfig = tokenKubeconfig(join(pki.dir, 'bootstrap.kubeconfig'), server, pki.caCert, `${tokenId}.${tokenSecret}`);
  const signingDuration = opts.clusterSigningDuration ?? '8760h0m0s';
  // A /16 per control plane (from its port), so clusters started at once on one machine hand out
  // distinct pod CIDRs; outside the service range 10.0.0.0/24.
  const clusterCIDR = `10.${64 + (apiPort % 128)}.0.0/16`;
  let etcdUrl = '';
  const peers: Peer[] = [];
  try {
    const etcd = await startEtcd(binDir, dir, detached);
    peers.push(etcd.peer);
    etcdUrl = etcd.url;
    peers.push(
      startPeer(
        'kube-apiserver',
        join(binDir, 'kube-apiserver'),
        apiserverArgs(pki.dir, etcd.url, apiPort, opts.verifyKubelets ?? true),
        join(dir, 'kube-apiserver.log'),
        { detached },
      ),
    );
    const tls = { ca: pki.caCert, cert: join(pki.dir, 'admin.crt'), key: join(pki.dir, 'admin.key') };
    await waitFor('kube-apiserver /readyz', async () => (await httpsGet(`${server}/readyz`, tls)).status === 200, 120_000, 500);
    execFileSync(join(binDir, 'kubectl'), [`--kubeconfig=${admin}`, 'apply', '-f', '-'], {
      input: bootstrapManifest(tokenId, tokenSecret),
      stdio: ['pipe', 'ignore', 'pipe'],
    });
    await grantKubeletApiAdmin(binDir, admin);
    peers.push(
      startPeer(
        'kube-controller-manager',
        join(binDir, 'kube-controller-manager'),
        [
          `--kubeconfig=${cm}`,
          `--authentication-kubeconfig=${cm}`,
          `--authorization-kubeconfig=${cm}`,
          '--bind-address=127.0.0.1',
          `--secure-port=${await freePort()}`,
          '--leader-elect=false',
          `--cluster-signing-cert-file=${pki.caCert}`,
          `--cluster-signing-key-file=${pki.caKey}`,
          `--cluster-signing-duration=${signingDuration}`,
          `--root-ca-file=${pki.caCert}`,
          `--service-account-private-key-file=${pki.saKey}`,
          '--use-service-account-credentials=true',
          // The gate starts the PodCertificateRequest cleaner (deletes requests older than 15 minutes), as on a cluster with the feature.
          `--feature-gates=${FEATURE_GATES}`,
          '--controllers=*',
          '--allocate-node-cidrs=true',
          `--cluster-cidr=${clusterCIDR}`,
          `--node-cidr-mask-size=${opts.nodeCidrMaskSize ?? 24}`,
          '--service-cluster-ip-range=10.0.0.0/24',
          `--node-monitor-grace-period=${opts.nodeMonitorGracePeriod ?? '50s'}`,
          '--node-monitor-period=2s',
          '--v=1',
        ],
        join(dir, 'kube-controller-manager.log'),
        { detached },
      ),
    );
    peers.push(
      startPeer(
        'kube-scheduler',
        join(binDir, 'kube-scheduler'),
        [
          `--kubeconfig=${sched}`,
          `--authentication-kubeconfig=${sched}`,
          `--authorization-kubeconfig=${sched}`,
          '--bind-address=127.0.0.1',
          `--secure-port=${await freePort()}`,
          '--leader-elect=false',
          '--v=1',
        ],
        join(dir, 'kube-scheduler.log'),
        { detached },
      ),
    );
  } catch (e) {
    await Promise.all(peers.map((p) => p.stop('SIGKILL')));
    throw e;
  }
  const info: ClusterInfo = {
    dir,
    binDir,
    server,
    adminKubeconfig: admin,
    caCert: pki.caCert,
    caKey: pki.caKey,
    kubeletClientCert: kubeletClient.cert,
    kubeletClientKey: kubeletClient.key,
    etcdUrl,
    bootstrapToken: `${tokenId}.${tokenSecret}`,
    bootstrapKubeconfig,
    clusterSigningDuration: signingDuration,
    clusterCIDR,
    pids: Object.fromEntries(peers.map((p) => [p.name, p.proc.pid ?? 0])),
  };
  writeFileSync(join(dir, 'state.json'), JSON.stringify(info, null, 2));
  return { info, peers };
}

/** A second kube-apiserver serving the same cluster (same etcd and keys) on another port. */
export interface ExtraApiServer {
  server: string;
  adminKubeconfig: string;
  peer: Peer;
}

/**
 * Starts another kube-apiserver on the running cluster's etcd. With
 * `verifyKubelets: false` it talks to kubelets without verifying their serving
 * certificates (no `--kubelet-certificate-authority`, kubeadm's default).
 * It does not reconcile the `kubernetes` Service endpoints (the first one does).
 */
export async function startExtraApiServer(info: ClusterInfo, opts: { verifyKubelets: boolean }): Promise<ExtraApiServer> {
  const pkiDir = join(info.dir, 'pki');
  const port = await freePort();
  const server = `https://127.0.0.1:${port}`;
  const name = `kube-apiserver-${port}`;
  const peer = startPeer(
    name,
    join(info.binDir, 'kube-apiserver'),
    [...apiserverArgs(pkiDir, info.etcdUrl, port, opts.verifyKubelets), '--endpoint-reconciler-type=none'],
    join(info.dir, `${name}.log`),
  );
  const client = { cert: join(pkiDir, 'admin.crt'), key: join(pkiDir, 'admin.key') };
  const pki: Pki = { dir: pkiDir, caCert: info.caCert, caKey: info.caKey, saKey: '', saPub: '' };
  const adminKubeconfig = writeKubeconfig(join(pkiDir, `admin-${port}.kubeconfig`), server, pki, client, 'kubernetes-admin');
  try {
    await waitFor(
      `${name} /readyz`,
      async () => (await httpsGet(`${server}/readyz`, { ca: info.caCert, ...client }).catch(() => ({ status: 0 }))).status === 200,
      120_000,
      500,
    );
  } catch (e) {
    await peer.stop('SIGKILL');
    throw e;
  }
  return { server, adminKubeconfig, peer };
}

/** The user of the apiserver's client certificate for kubelets (kubeadm's name). */
export const KUBELET_CLIENT_USER = 'kube-apiserver-kubelet-client';

/** As kubeadm's `kubeadm:kubelet-api-admin`... binding: the apiserver may use every kubelet API (logs, exec, metrics). */
async function grantKubeletApiAdmin(binDir: string, adminKubeconfig: string): Promise<void> {
  await waitFor(
    "ClusterRoleBinding for the apiserver's kubelet client",
    () => {
      try {
        execFileSync(
          join(binDir, 'kubectl'),
          [
            `--kubeconfig=${adminKubeconfig}`,
            'create',
            'clusterrolebinding',
            'kube-apiserver-kubelet-api-admin',
            '--clusterrole=system:kubelet-api-admin',
            `--user=${KUBELET_CLIENT_USER}`,
          ],
          { stdio: ['ignore', 'pipe', 'pipe'], timeout: 30_000 },
        );
        return true;
      } catch (e) {
        return /AlreadyExists/.test(String((e as { stderr?: Buffer }).stderr ?? ''));
      }
    },
    60_000,
    1000,
  );
}

/** Issues a node identity (`system:node:<name>`) and its kubeconfig, plus a serving cert for its kubelet API. */
export function issueNodeCredentials(
  info: ClusterInfo,
  nodeName: string,
  ips: string[] = ['127.0.0.1'],
): { kubeconfig: string; servingCert: string; servingKey: string } {
  const pki: Pki = { dir: join(info.dir, 'pki'), caCert: info.caCert, caKey: info.caKey, saKey: '', saPub: '' };
  const kubeconfig = clientKubeconfig(pki, info.server, `node-${nodeName}`, `system:node:${nodeName}`, ['system:nodes']);
  const serving = issue(pki, {
    name: `node-${nodeName}-serving`,
    cn: `system:node:${nodeName}`,
    orgs: ['system:nodes'],
    usage: 'server',
    dnsNames: [nodeName, 'localhost'],
    ips,
  });
  return { kubeconfig, servingCert: serving.cert, servingKey: serving.key };
}

/** Issues a client certificate the cluster CA signed for user `cn` in groups `orgs`; returns `{ cert, key }` paths. */
export function issueClientCert(info: ClusterInfo, name: string, cn: string, orgs: string[] = []): { cert: string; key: string } {
  const pki: Pki = { dir: join(info.dir, 'pki'), caCert: info.caCert, caKey: info.caKey, saKey: '', saPub: '' };
  return issue(pki, { name, cn, orgs, usage: 'client' });
}

/** Stops the peers (reverse start order) and removes the state directory. */
export async function stopControlPlane(info: ClusterInfo, peers: Peer[]): Promise<void> {
  for (const p of [...peers].reverse()) await p.stop('SIGTERM', 10_000);
  rmSync(info.dir, { recursive: true, force: true });
}

/** Ensures a directory exists (re-exported for harness users). */
export function ensureDir(p: string): string {
  mkdirSync(p, { recursive: true });
  return p;
}
