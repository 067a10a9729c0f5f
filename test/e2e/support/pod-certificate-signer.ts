/**
 * A PodCertificateRequest signer for e2e tests, after upstream's
 * test/utils/hermeticpodcertificatesigner: it runs in the test process as a
 * service account of its own, with only the RBAC a signer needs (`sign` on its
 * signer name, read and watch PodCertificateRequests, update their status),
 * watches the requests addressed to its signer name and answers each once:
 *
 * - keys of the `spiffe/path-overriding` user annotation only, else Denied
 *   (`InvalidUnverifiedUserAnnotations`, as signers are told to deny keys
 *   they do not know);
 * - ECDSA and Ed25519 keys only, else Denied (`UnsupportedKeyType`);
 * - otherwise Issued: a leaf for the request's public key with a SPIFFE URI
 *   (`spiffe://cluster.local/ns/<ns>/sa/<sa>`, or the annotation's path),
 *   signed by an intermediate of a root CA made here; the chain is leaf then
 *   intermediate; lifetime min(24 h, maxExpirationSeconds), backdated 2
 *   minutes; beginRefreshAt 30 minutes before notAfter.
 */
import 'reflect-metadata';
import { createPublicKey, webcrypto } from 'node:crypto';
import { request, type RequestOptions } from 'node:https';
import * as k8s from '@kubernetes/client-node';
import * as x509 from '@peculiar/x509';
import type { ClusterInfo } from '../../cluster/control-plane.ts';

x509.cryptoProvider.set(webcrypto as unknown as Crypto);

/** upstream's `SpiffePathKey`. */
export const SPIFFE_PATH_KEY = 'spiffe/path-overriding';

const EC = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;

/** A PodCertificateRequest as the watch sends it. */
interface Pcr {
  metadata: { name: string; namespace: string; resourceVersion?: string };
  spec: {
    signerName: string;
    serviceAccountName: string;
    maxExpirationSeconds: number;
    stubPKCS10Request: string;
    unverifiedUserAnnotations?: Record<string, string>;
  };
  status?: { conditions?: { type: string }[] };
}

/** A running test signer. */
export interface TestSigner {
  readonly signerName: string;
  /** The root CA (PEM): what issued certificates chain to. */
  readonly rootPem: string;
  /** The intermediate CA (PEM), second in every issued chain. */
  readonly intermediatePem: string;
  stop(): Promise<void>;
}

const seconds = (ms: number) => new Date(Math.floor(ms / 1000) * 1000);

async function caPair(name: string, issuer?: { cert: x509.X509Certificate; keys: CryptoKeyPair }) {
  const keys = (await webcrypto.subtle.generateKey(EC, true, ['sign', 'verify'])) as CryptoKeyPair;
  const notBefore = seconds(Date.now() - 60 * 60_000);
  const notAfter = seconds(Date.now() + 365 * 24 * 60 * 60_000);
  const extensions = [
    new x509.BasicConstraintsExtension(true, undefined, true),
    new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.digitalSignature, true),
    await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
  ];
  const cert = issuer
    ? await x509.X509CertificateGenerator.create({
        serialNumber: '02',
        subject: `CN=${name}`,
        issuer: issuer.cert.subject,
        notBefore,
        notAfter,
        publicKey: keys.publicKey,
        signingKey: issuer.keys.privateKey,
        signingAlgorithm: EC,
        extensions: [...extensions, await x509.AuthorityKeyIdentifierExtension.create(issuer.cert)],
      })
    : await x509.X509CertificateGenerator.createSelfSigned({
        serialNumber: '01',
        name: `CN=${name}`,
        notBefore,
        notAfter,
        keys,
        signingAlgorithm: EC,
        extensions,
      });
  return { cert, keys };
}

/** The signer's own identity: a service account bound to the signer's ClusterRole, and a token for it. */
async function signerIdentity(info: ClusterInfo, admin: k8s.KubeConfig, signerName: string, id: string): Promise<k8s.KubeConfig> {
  const core = admin.makeApiClient(k8s.CoreV1Api);
  const rbac = admin.makeApiClient(k8s.RbacAuthorizationV1Api);
  const namespace = 'kube-system';
  await core.createNamespacedServiceAccount({ namespace, body: { metadata: { name: id } } });
  await rbac.createClusterRole({
    body: {
      metadata: { name: id },
      rules: [
        { apiGroups: ['certificates.k8s.io'], resources: ['signers'], verbs: ['sign'], resourceNames: [signerName] },
        { apiGroups: ['certificates.k8s.io'], resources: ['podcertificaterequests'], verbs: ['get', 'list', 'watch'] },
        { apiGroups: ['certificates.k8s.io'], resources: ['podcertificaterequests/status'], verbs: ['update'] },
      ],
    },
  });
  await rbac.createClusterRoleBinding({
    body: {
      metadata: { name: id },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: id },
      subjects: [{ kind: 'ServiceAccount', namespace, name: id }],
    },
  });
  const tr = await core.createNamespacedServiceAccountToken({ name: id, namespace, body: { spec: { audiences: [], expirationSeconds: 3600 } } });
  const kc = new k8s.KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'test', server: info.server, caFile: info.caCert, skipTLSVerify: false }],
    users: [{ name: id, token: tr.status!.token }],
    contexts: [{ name: 'signer', cluster: 'test', user: id }],
    currentContext: 'signer',
  });
  return kc;
}

/** A JSON request with `kc`'s credentials; rejects with the apiserver's message on a status ≥ 300. */
async function call(kc: k8s.KubeConfig, method: string, path: string, body: unknown): Promise<unknown> {
  const url = new URL(kc.getCurrentCluster()!.server + path);
  const opts: RequestOptions = { method, headers: { 'content-type': 'application/json' } };
  await kc.applyToHTTPSOptions(opts);
  return new Promise((resolve, reject) => {
    const req = request(url, opts, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => ((res.statusCode ?? 0) < 300 ? resolve(JSON.parse(text)) : reject(new Error(`${method} ${path}: ${res.statusCode} ${text}`))));
    });
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}

/** Starts the signer for `signerName` (see the module comment). */
export async function startTestSigner(info: ClusterInfo, admin: k8s.KubeConfig, signerName: string): Promise<TestSigner> {
  const id = `pcr-signer-${Math.random().toString(36).slice(2, 7)}`;
  const kc = await signerIdentity(info, admin, signerName, id);
  const root = await caPair('test-signer-root');
  const intermediate = await caPair('test-signer-intermediate', root);
  const answered = new Set<string>();
  let serial = 16;

  const deny = (reason: string, message: string) => ({
    conditions: [{ type: 'Denied', status: 'True', reason, message, lastTransitionTime: seconds(Date.now()).toISOString() }],
  });

  async function answer(pcr: Pcr): Promise<unknown> {
    const annotations = pcr.spec.unverifiedUserAnnotations ?? {};
    const unknown = Object.keys(annotations).filter((k) => k !== SPIFFE_PATH_KEY);
    if (unknown.length > 0) return deny('InvalidUnverifiedUserAnnotations', `unknown user annotation keys: ${unknown.join(', ')}`);
    const csr = new x509.Pkcs10CertificateRequest(Buffer.from(pcr.spec.stubPKCS10Request, 'base64'));
    const spki = Buffer.from(csr.publicKey.rawData);
    const type = createPublicKey({ key: spki, format: 'der', type: 'spki' }).asymmetricKeyType;
    if (type !== 'ec' && type !== 'ed25519') return deny('UnsupportedKeyType', `this signer issues ECDSA and Ed25519 keys only (got ${type}); use ECDSAP256`);
    const lifetimeMs = Math.min(24 * 3600, pcr.spec.maxExpirationSeconds) * 1000;
    const notBefore = seconds(Date.now() - 2 * 60_000);
    const notAfter = new Date(notBefore.getTime() + lifetimeMs);
    const path = annotations[SPIFFE_PATH_KEY] ?? `/ns/${pcr.metadata.namespace}/sa/${pcr.spec.serviceAccountName}`;
    const leaf = await x509.X509CertificateGenerator.create({
      serialNumber: (serial++).toString(16).padStart(2, '0'),
      subject: '',
      issuer: intermediate.cert.subject,
      notBefore,
      notAfter,
      publicKey: spki,
      signingKey: intermediate.keys.privateKey,
      signingAlgorithm: EC,
      extensions: [
        new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
        new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.clientAuth, x509.ExtendedKeyUsage.serverAuth]),
        new x509.SubjectAlternativeNameExtension([{ type: 'url', value: `spiffe://cluster.local${path}` }], true),
      ],
    });
    return {
      conditions: [{ type: 'Issued', status: 'True', reason: 'Reason', message: 'Issued', lastTransitionTime: seconds(Date.now()).toISOString() }],
      certificateChain: `${leaf.toString('pem')}\n${intermediate.cert.toString('pem')}\n`,
      notBefore: notBefore.toISOString(),
      notAfter: notAfter.toISOString(),
      beginRefreshAt: new Date(notAfter.getTime() - 30 * 60_000).toISOString(),
    };
  }

  async function handle(pcr: Pcr): Promise<void> {
    const key = `${pcr.metadata.namespace}/${pcr.metadata.name}`;
    if (pcr.spec.signerName !== signerName || answered.has(key) || (pcr.status?.conditions ?? []).length > 0) return;
    answered.add(key);
    const status = await answer(pcr);
    const path = `/apis/certificates.k8s.io/v1beta1/namespaces/${pcr.metadata.namespace}/podcertificaterequests/${pcr.metadata.name}/status`;
    await call(kc, 'PUT', path, { ...pcr, status }).catch((e: unknown) => {
      answered.delete(key);
      console.error(`test signer: ${String(e)}`);
    });
  }

  let stopped = false;
  let ctl: AbortController | undefined;
  const watch = async (): Promise<void> => {
    if (stopped) return;
    ctl = await new k8s.Watch(kc).watch(
      '/apis/certificates.k8s.io/v1beta1/podcertificaterequests',
      { fieldSelector: `spec.signerName=${signerName}` },
      (type, obj: Pcr) => {
        if (type === 'ADDED' || type === 'MODIFIED') void handle(obj);
      },
      () => setTimeout(() => void watch(), 200),
    );
  };
  await watch();
  return {
    signerName,
    rootPem: root.cert.toString('pem'),
    intermediatePem: intermediate.cert.toString('pem'),
    async stop() {
      stopped = true;
      ctl?.abort();
      const rbac = admin.makeApiClient(k8s.RbacAuthorizationV1Api);
      await rbac.deleteClusterRoleBinding({ name: id }).catch(() => undefined);
      await rbac.deleteClusterRole({ name: id }).catch(() => undefined);
      await admin
        .makeApiClient(k8s.CoreV1Api)
        .deleteNamespacedServiceAccount({ name: id, namespace: 'kube-system' })
        .catch(() => undefined);
    },
  };
}
