/**
 * TLS bootstrap, as upstream's `pkg/kubelet/certificate/bootstrap/bootstrap.go`
 * (LoadClientCert):
 *
 *   --kubeconfig exists and its client certificates are unexpired? ──► use it
 *        │ no (and --bootstrap-kubeconfig given)
 *   key: the stored pair's, else <cert-dir>/kubelet-client.key.tmp (ECDSA P-256, kept across restarts)
 *   CSR node-csr-<digest>: CN=system:node:<name>, O=system:nodes,
 *        signer kubernetes.io/kube-apiserver-client-kubelet, usages digital signature + client auth
 *        (created with the bootstrap credentials; waits up to an hour for approval and signature)
 *   <cert-dir>/kubelet-client-<date>.pem + kubelet-client-current.pem ──► --kubeconfig written
 *        (the bootstrap kubeconfig's server and CA, client cert/key = kubelet-client-current.pem)
 */
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import type { Logger } from '@nodelet/plugin-api/v1';
import { errorDetail, nodeletError } from '../errors/index.ts';
import { ApiTransport, apiStatus, KubeConfig, type Cluster } from '../kube/index.ts';
import { replaceFile, replaceFileSync } from '../paths/index.ts';
import { CertStore } from './cert-store.ts';
import { requestCertificate, waitForCertificate } from './csr-client.ts';
import { createCsr, generateKeys, importKeys, parseKeyPair, pemBlocks, privateKeyPem, sha512_256, spkiDer, type KeyPair, type Subject } from './x509.ts';
import { X509Certificate } from 'node:crypto';

/** upstream `certificatesv1.KubeAPIServerClientKubeletSignerName`. */
export const CLIENT_KUBELET_SIGNER = 'kubernetes.io/kube-apiserver-client-kubelet';
/** upstream `certificatesv1.KubeletServingSignerName`. */
export const KUBELET_SERVING_SIGNER = 'kubernetes.io/kubelet-serving';
/** Key usages of an ECDSA client certificate (upstream DefaultKubeletClientGetUsages). */
export const CLIENT_USAGES = ['digital signature', 'client auth'] as const;
/** Key usages of an ECDSA serving certificate (upstream DefaultKubeletServingGetUsages). */
export const SERVING_USAGES = ['digital signature', 'server auth'] as const;
/** How long a bootstrap CSR is waited for (upstream: 3600 s). */
const BOOTSTRAP_WAIT_MS = 3600_000;
const TMP_KEY = 'kubelet-client.key.tmp';

/** The client certificate subject of node `nodeName`. */
export const nodeClientSubject = (nodeName: string): Subject => ({ cn: `system:node:${nodeName}`, orgs: ['system:nodes'] });

/** A kubeconfig's client certificates (from file or data); empty when it has none. */
function kubeconfigCerts(kc: KubeConfig): X509Certificate[] {
  const user = kc.getCurrentUser();
  const text = user?.certFile ? readFileSync(user.certFile, 'utf8') : user?.certData ? Buffer.from(user.certData, 'base64').toString() : '';
  return pemBlocks(text, 'CERTIFICATE').map((b) => new X509Certificate(b));
}

/** The kubeconfig's client certificate and key, if it has both (files or data). */
export function kubeconfigKeyPair(file: string): KeyPair | undefined {
  const kc = new KubeConfig();
  kc.loadFromFile(file);
  const u = kc.getCurrentUser();
  const read = (f?: string, d?: string) => (f ? readFileSync(f, 'utf8') : d ? Buffer.from(d, 'base64').toString() : '');
  const cert = read(u?.certFile, u?.certData);
  const key = read(u?.keyFile, u?.keyData);
  return cert && key ? parseKeyPair(cert, key) : undefined;
}

/** upstream isClientConfigStillValid: the file loads and has client certificates, none expired. */
export function isKubeconfigStillValid(file: string, log?: Logger, now = Date.now()): boolean {
  if (!existsSync(file)) return false;
  try {
    const kc = new KubeConfig();
    kc.loadFromFile(file);
    const certs = kubeconfigCerts(kc);
    if (certs.length === 0) {
      log?.warn({ kubeconfig: file }, 'existing kubeconfig has no client certificate');
      return false;
    }
    const expired = certs.find((c) => Date.parse(c.validTo) < now);
    if (expired) {
      log?.warn({ kubeconfig: file, notAfter: expired.validTo }, 'part of the existing client certificate is expired');
      return false;
    }
    return true;
  } catch (e) {
    log?.warn({ kubeconfig: file, err: errorDetail(e) }, 'unable to read existing kubeconfig');
    return false;
  }
}

/** upstream digestedName: `node-csr-` + base64url(SHA-512/256 over public key, CN, orgs, usages). */
export async function digestedCsrName(keys: Awaited<ReturnType<typeof generateKeys>>, subject: Subject, usages: readonly string[]): Promise<string> {
  const enc = (b: Buffer) => Buffer.from(b.toString('base64url'));
  const parts = [await spkiDer(keys), Buffer.from(subject.cn), ...(subject.orgs ?? []).map((o) => Buffer.from(o)), ...usages.map((u) => Buffer.from(u))];
  const sep = Buffer.from('|');
  return `node-csr-${sha512_256(parts.flatMap((p) => [enc(p), sep])).toString('base64url')}`;
}

/** Writes a kubeconfig for the node (upstream writeKubeconfigFromBootstrapping). */
export async function writeNodeKubeconfig(file: string, cluster: Cluster, pemPath: string): Promise<void> {
  const doc = {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [
      {
        name: 'default-cluster',
        cluster: {
          server: cluster.server,
          ...(cluster.skipTLSVerify ? { 'insecure-skip-tls-verify': true } : {}),
          ...(cluster.caFile
            ? { 'certificate-authority': path.resolve(cluster.caFile) }
            : cluster.caData
              ? { 'certificate-authority-data': cluster.caData }
              : {}),
        },
      },
    ],
    contexts: [{ name: 'default-context', context: { cluster: 'default-cluster', namespace: 'default', user: 'default-auth' } }],
    'current-context': 'default-context',
    users: [{ name: 'default-auth', user: { 'client-certificate': pemPath, 'client-key': pemPath } }],
  };
  await mkdir(path.dirname(file), { recursive: true });
  const { stringify } = await import('yaml'); // loaded here only: an idle node never writes YAML (bench/README.md)
  await replaceFile(file, stringify(doc), 0o600);
}

/** Options of {@link bootstrapClientCert}. */
export interface BootstrapOptions {
  readonly kubeconfig: string;
  readonly bootstrapKubeconfig: string;
  readonly certDir: string;
  readonly nodeName: string;
  readonly log: Logger;
  readonly signal?: AbortSignal;
}

/** Runs the bootstrap (see the module comment); resolves true if a new certificate was obtained. */
export async function bootstrapClientCert(o: BootstrapOptions): Promise<boolean> {
  if (isKubeconfigStillValid(o.kubeconfig, o.log)) {
    o.log.info({ kubeconfig: o.kubeconfig }, 'kubeconfig exists and is valid, skipping bootstrap');
    return false;
  }
  const fail = (detail: string, cause?: unknown) => nodeletError('NDL_TLS_BOOTSTRAP', detail, cause);
  const bootstrap = new KubeConfig();
  try {
    bootstrap.loadFromFile(o.bootstrapKubeconfig);
  } catch (e) {
    throw fail(`unable to load bootstrap kubeconfig ${o.bootstrapKubeconfig}: ${errorDetail(e)}`, e);
  }
  const cluster = bootstrap.getCurrentCluster();
  if (!cluster) throw fail(`bootstrap kubeconfig ${o.bootstrapKubeconfig} has no current cluster`);
  o.log.info({ bootstrapKubeconfig: o.bootstrapKubeconfig }, 'using the bootstrap kubeconfig to request a client certificate');
  const api = new ApiTransport(bootstrap);
  const store = new CertStore({ certDir: o.certDir, prefix: 'kubelet-client' });
  let keyPem: string | undefined;
  try {
    keyPem = store.current()?.key;
  } catch {
    keyPem = undefined;
  }
  const tmpKey = path.join(o.certDir, TMP_KEY);
  if (!keyPem) {
    if (existsSync(tmpKey)) keyPem = readFileSync(tmpKey, 'utf8');
    else {
      keyPem = await privateKeyPem(await generateKeys('ecdsa'));
      await mkdir(o.certDir, { recursive: true, mode: 0o755 });
      replaceFileSync(tmpKey, keyPem, 0o600);
    }
  }
  const keys = await importKeys(keyPem);
  const subject = nodeClientSubject(o.nodeName);
  const usages = keys.kind === 'rsa' ? [...CLIENT_USAGES, 'key encipherment'] : [...CLIENT_USAGES];
  const name = await digestedCsrName(keys, subject, usages);
  const csrPem = await createCsr(keys, subject);
  let cert: string;
  try {
    const ref = await retryUnreachable(() => requestCertificate(api, { name, csrPem, signerName: CLIENT_KUBELET_SIGNER, usages }), o);
    o.log.info({ csr: ref.name }, 'waiting for the client certificate to be issued');
    cert = await waitForCertificate(api, ref, BOOTSTRAP_WAIT_MS, o.signal);
  } catch (e) {
    throw fail(errorDetail(e), e);
  } finally {
    void api.close();
  }
  const pair = await store.update(cert, keyPem);
  rmSync(tmpKey, { force: true });
  await writeNodeKubeconfig(o.kubeconfig, cluster, store.currentPath());
  o.log.info({ kubeconfig: o.kubeconfig, cert: store.currentPath(), notAfter: pair.notAfter.toISOString() }, 'client certificate issued; kubeconfig written');
  return true;
}

/** Retries `fn` every 2 s for up to a minute while the apiserver cannot be reached (upstream waitForServer). */
async function retryUnreachable<T>(fn: () => Promise<T>, o: BootstrapOptions): Promise<T> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    try {
      return await fn();
    } catch (e) {
      const unreachable = apiStatus((e as Error).cause) === undefined && Date.now() < deadline;
      if (!unreachable) throw e;
      o.log.info({ err: errorDetail(e) }, 'failed to connect to apiserver; retrying');
      await new Promise((r) => setTimeout(r, 2000));
      o.signal?.throwIfAborted();
    }
  }
}
