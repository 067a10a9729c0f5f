import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { X509Certificate } from 'node:crypto';
import { lstat, mkdtemp, readdir, readFile, readlink, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { isNodeletError } from '../../../core/errors/catalogue.ts';
import { tmpdir } from 'node:os';
import path from 'node:path';
import * as k8s from '@kubernetes/client-node';
import pino from 'pino';
import {
  bootstrapClientCert,
  CertificateManager,
  CertStore,
  digestedCsrName,
  isKubeconfigStillValid,
  issuedCertificate,
  jitteryDuration,
  kubeconfigKeyPair,
  nodeClientSubject,
  pairTimestamp,
  satisfiesTemplate,
  writeNodeKubeconfig,
  type KeyPair,
  type Subject,
} from '../../../core/certificates/index.ts';
import { createCertificate, createCsr, generateKeys, importKeys, KeyUsage, parseKeyPair, parseCsr, privateKeyPem } from '../../../core/certificates/index.ts';
import { makeCa } from '../server/test-pki.ts';
import { ApiTransport, KubeConfig } from '../../../core/kube/index.ts';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'certs-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const log = pino({ level: 'silent' });

/** A certificate for `subject` signed by a fresh CA, valid [notBefore, notAfter]. */
async function signed(subject: Parameters<typeof createCertificate>[0]['subject'], notBefore: Date, notAfter: Date) {
  const ca = await makeCa('test-ca');
  const keys = await generateKeys('ecdsa');
  const c = await createCertificate({
    subject,
    publicKey: keys.pair.publicKey,
    issuer: ca.x509,
    signing: ca.keys,
    notBefore,
    notAfter,
    keyUsage: KeyUsage.digitalSignature,
    extKeyUsage: ['clientAuth'],
  });
  return { cert: `${c.toString('pem')}\n`, key: await privateKeyPem(keys) };
}

describe('jitteryDuration (upstream: 70-90 % of the lifetime)', () => {
  it('spans exactly 70 % to 90 %', () => {
    expect(jitteryDuration(1000, () => 0)).toBeCloseTo(700);
    expect(jitteryDuration(1000, () => 1)).toBeCloseTo(900);
    expect(jitteryDuration(1000, () => 0.5)).toBeCloseTo(800);
  });
});

describe('CSRs', () => {
  it('carry the subject and SANs (UTF8String names) and are signed by the key', async () => {
    const keys = await generateKeys('ecdsa');
    const pem = await createCsr(keys, { cn: 'system:node:n1', orgs: ['system:nodes'], dnsNames: ['n1'], ips: ['10.0.0.7'] });
    const csr = await parseCsr(pem);
    expect(csr.subject).toBe('O=system:nodes, CN=system:node:n1');
    expect(await csr.verify()).toBe(true);
    const san = csr.extensions.find((e) => e.type === '2.5.29.17');
    expect(san).toBeDefined();
    const text = Buffer.from(csr.rawData).toString('latin1');
    expect(text).toContain('\x0c\x0esystem:node:n1');
    expect(text).toContain('\x0c\x0csystem:nodes');
  });

  it('bootstrap CSR names are node-csr-<digest> of key, subject and usages (stable per key)', async () => {
    const a = await generateKeys('ecdsa');
    const b = await generateKeys('ecdsa');
    const subject = nodeClientSubject('n1');
    const usages = ['digital signature', 'client auth'];
    const na = await digestedCsrName(a, subject, usages);
    expect(na).toMatch(/^node-csr-[A-Za-z0-9_-]{43}$/);
    expect(await digestedCsrName(await importKeys(await privateKeyPem(a)), subject, usages)).toBe(na);
    expect(await digestedCsrName(b, subject, usages)).not.toBe(na);
    expect(await digestedCsrName(a, nodeClientSubject('n2'), usages)).not.toBe(na);
  });

  it('are issued only when approved and carrying a certificate; denied and failed throw', () => {
    const cert = Buffer.from('-----BEGIN CERTIFICATE-----\nAA==\n-----END CERTIFICATE-----\n').toString('base64');
    const csr = (conditions: k8s.V1CertificateSigningRequestCondition[], certificate?: string): k8s.V1CertificateSigningRequest => ({
      spec: { request: '', signerName: 's' },
      status: { conditions, certificate },
    });
    expect(issuedCertificate(csr([]))).toBeUndefined();
    expect(issuedCertificate(csr([{ type: 'Approved', status: 'True' }]))).toBeUndefined();
    expect(issuedCertificate(csr([{ type: 'Approved', status: 'True' }], cert))).toContain('BEGIN CERTIFICATE');
    expect(() => issuedCertificate(csr([{ type: 'Denied', status: 'True', reason: 'NoWay', message: 'no' }]))).toThrow(/denied, reason: NoWay/);
    expect(() =>
      issuedCertificate(
        csr([
          { type: 'Approved', status: 'True' },
          { type: 'Failed', status: 'True', reason: 'SignerFailure' },
        ]),
      ),
    ).toThrow(/failed, reason: SignerFailure/);
  });
});

describe('CertStore (upstream file layout)', () => {
  it('writes <prefix>-<date>.pem (certs then key, 0600) and points <prefix>-current.pem at it', async () => {
    const a = await signed({ cn: 'system:node:n1', orgs: ['system:nodes'] }, new Date(Date.now() - 60_000), new Date(Date.now() + 3600_000));
    const b = await signed({ cn: 'system:node:n1', orgs: ['system:nodes'] }, new Date(Date.now() - 60_000), new Date(Date.now() + 3600_000));
    let t = new Date(2026, 10, 30, 21, 5, 9);
    const store = new CertStore({ certDir: dir, prefix: 'kubelet-client', now: () => t });
    expect(store.current()).toBeUndefined();
    await store.update(a.cert, a.key);
    const first = path.join(dir, 'kubelet-client-2026-11-30-21-05-09.pem');
    expect((await stat(first)).mode & 0o777).toBe(0o600);
    expect(await readFile(first, 'utf8')).toBe(a.cert + a.key);
    expect((await lstat(store.currentPath())).isSymbolicLink()).toBe(true);
    expect(await readlink(store.currentPath())).toBe(first);
    t = new Date(2026, 10, 30, 21, 6, 0);
    const pair = await store.update(b.cert, b.key);
    expect(await readlink(store.currentPath())).toBe(path.join(dir, 'kubelet-client-2026-11-30-21-06-00.pem'));
    expect(store.current()!.cert).toBe(pair.cert);
    expect(pairTimestamp(new Date(2026, 0, 2, 3, 4, 5))).toBe('2026-01-02-03-04-05');
  });

  it('finishes an interrupted swap (updated → current) and refuses a regular file as current', async () => {
    const a = await signed({ cn: 'x' }, new Date(Date.now() - 60_000), new Date(Date.now() + 3600_000));
    const target = path.join(dir, 'kubelet-server-2026-01-01-00-00-00.pem');
    await writeFile(target, a.cert + a.key, { mode: 0o600 });
    await symlink(target, path.join(dir, 'kubelet-server-updated.pem'));
    const store = new CertStore({ certDir: dir, prefix: 'kubelet-server' });
    expect(store.current()!.cert).toBe(a.cert);
    expect(await readlink(store.currentPath())).toBe(target);
    const other = new CertStore({ certDir: dir, prefix: 'weird' });
    await writeFile(other.currentPath(), 'x');
    await expect(other.update(a.cert, a.key)).rejects.toThrow(/to be a symlink but it is a file/);
  });

  it('falls back to the given cert/key files when empty, and rejects a key that does not match', async () => {
    const a = await signed({ cn: 'x' }, new Date(Date.now() - 60_000), new Date(Date.now() + 3600_000));
    const b = await signed({ cn: 'y' }, new Date(Date.now() - 60_000), new Date(Date.now() + 3600_000));
    await writeFile(path.join(dir, 'a.crt'), a.cert);
    await writeFile(path.join(dir, 'a.key'), a.key);
    const store = new CertStore({
      certDir: dir,
      prefix: 'kubelet-server',
      fallbackCertFile: path.join(dir, 'a.crt'),
      fallbackKeyFile: path.join(dir, 'a.key'),
    });
    expect(store.current()!.key).toBe(a.key);
    await expect(store.update(a.cert, b.key)).rejects.toThrow(/does not match/);
  });
});

describe('CertificateManager rotation deadline', () => {
  async function pair(subject: Subject, lifetimeMs: number, start = Date.now() - 1000): Promise<KeyPair> {
    const p = await signed(subject, new Date(start), new Date(start + lifetimeMs));
    return parseKeyPair(p.cert, p.key);
  }
  const manager = (initial: KeyPair | undefined, random: () => number, template = nodeClientSubject('n1')) =>
    new CertificateManager({
      name: 'client',
      signerName: 's',
      usages: [],
      log,
      initial,
      random,
      template: () => template,
      store: new CertStore({ certDir: dir, prefix: 'kubelet-client' }),
      api: () => new ApiTransport(new KubeConfig()),
    });

  it('is notBefore + 70-90 % of the lifetime, drawn once per certificate', async () => {
    const p = await pair(nodeClientSubject('n1'), 100_000_000);
    const nb = p.notBefore.getTime();
    const life = p.notAfter.getTime() - nb;
    let r = 0;
    const m = manager(p, () => r);
    expect(m.nextRotationDeadline()).toBeCloseTo(nb + 0.7 * life, -1);
    r = 1;
    expect(m.nextRotationDeadline()).toBeCloseTo(nb + 0.7 * life, -1);
    expect(manager(p, () => 1).nextRotationDeadline()).toBeCloseTo(nb + 0.9 * life, -1);
  });

  it('is now without a certificate or when the certificate does not fit the template (e.g. an admin kubeconfig)', async () => {
    const before = Date.now();
    expect(manager(undefined, () => 0.5).nextRotationDeadline()).toBeGreaterThanOrEqual(before);
    expect(manager(undefined, () => 0.5).nextRotationDeadline()).toBeLessThanOrEqual(Date.now());
    const admin = await pair({ cn: 'kubernetes-admin', orgs: ['system:masters'] }, 100_000_000);
    expect(manager(admin, () => 0.5).nextRotationDeadline()).toBeLessThanOrEqual(Date.now());
    expect(satisfiesTemplate(admin, nodeClientSubject('n1'))).toBe(false);
    const node = await pair(nodeClientSubject('n1'), 100_000_000);
    expect(satisfiesTemplate(node, nodeClientSubject('n1'))).toBe(true);
    expect(satisfiesTemplate(node, { ...nodeClientSubject('n1'), ips: ['10.0.0.1'] })).toBe(false);
  });
});

describe('bootstrapClientCert', () => {
  it('keeps a valid kubeconfig without asking the apiserver', async () => {
    const p = await signed(nodeClientSubject('n1'), new Date(Date.now() - 60_000), new Date(Date.now() + 3600_000));
    const pem = path.join(dir, 'kubelet-client-current.pem');
    await writeFile(pem, p.cert + p.key);
    const file = path.join(dir, 'kubelet.conf');
    // The server is unreachable: any request would fail.
    await writeNodeKubeconfig(file, { name: 'x', server: 'https://127.0.0.1:1', skipTLSVerify: false }, pem);
    expect(await bootstrapClientCert({ kubeconfig: file, bootstrapKubeconfig: path.join(dir, 'missing'), certDir: dir, nodeName: 'n1', log })).toBe(false);
  });

  it('fails with NDL_TLS_BOOTSTRAP naming an unreadable bootstrap kubeconfig, writing nothing', async () => {
    const err = await bootstrapClientCert({
      kubeconfig: path.join(dir, 'kubelet.conf'),
      bootstrapKubeconfig: path.join(dir, 'missing'),
      certDir: dir,
      nodeName: 'n1',
      log,
    }).catch((e) => e);
    expect(isNodeletError(err, 'NDL_TLS_BOOTSTRAP')).toBe(true);
    expect(err.message).toContain(`unable to load bootstrap kubeconfig ${path.join(dir, 'missing')}`);
    expect(await readdir(dir)).toEqual([]);
  });
});

describe('kubeconfigs', () => {
  it('writes the node kubeconfig like upstream (server and CA of the bootstrap kubeconfig, cert/key = current pem)', async () => {
    const p = await signed(nodeClientSubject('n1'), new Date(Date.now() - 60_000), new Date(Date.now() + 3600_000));
    const pem = path.join(dir, 'kubelet-client-current.pem');
    await writeFile(pem, p.cert + p.key, { mode: 0o600 });
    const file = path.join(dir, 'kubelet.conf');
    await writeNodeKubeconfig(file, { name: 'x', server: 'https://10.0.0.1:6443', caFile: '/etc/ca.crt', skipTLSVerify: false }, pem);
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    const kc = new k8s.KubeConfig();
    kc.loadFromFile(file);
    expect(kc.getCurrentCluster()).toMatchObject({ server: 'https://10.0.0.1:6443', caFile: '/etc/ca.crt' });
    expect(kc.getCurrentUser()).toMatchObject({ certFile: pem, keyFile: pem });
    expect(kc.getContextObject(kc.getCurrentContext())).toMatchObject({ cluster: 'default-cluster', user: 'default-auth', namespace: 'default' });
    expect(isKubeconfigStillValid(file)).toBe(true);
    expect(new X509Certificate(kubeconfigKeyPair(file)!.cert).subject).toBe('O=system:nodes\nCN=system:node:n1');
  });

  it('is not valid when missing, without a client certificate, or expired', async () => {
    expect(isKubeconfigStillValid(path.join(dir, 'none'))).toBe(false);
    const token = path.join(dir, 'token.conf');
    await writeFile(
      token,
      'apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: "https://x"}}]\nusers: [{name: u, user: {token: abc.def}}]\ncontexts: [{name: c, context: {cluster: c, user: u}}]\ncurrent-context: c\n',
    );
    expect(isKubeconfigStillValid(token)).toBe(false);
    const old = await signed(nodeClientSubject('n1'), new Date(Date.now() - 7200_000), new Date(Date.now() - 3600_000));
    const pem = path.join(dir, 'old.pem');
    await writeFile(pem, old.cert + old.key);
    const file = path.join(dir, 'old.conf');
    await writeNodeKubeconfig(file, { name: 'x', server: 'https://x', skipTLSVerify: false }, pem);
    expect(isKubeconfigStillValid(file)).toBe(false);
  });
});
