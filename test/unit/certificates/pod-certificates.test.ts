/**
 * Pod certificates: the keys and stub PKCS#10 requests, the chain clean-up,
 * the manager's state machine over a fake API (ports of upstream's
 * pkg/kubelet/podcertificate/podcertificatemanager_test.go cases, named on each
 * test), and the projected volume's files written through prepareVolumes with
 * the real manager, rewritten when a refreshed certificate is issued.
 */
import { createPrivateKey, createPublicKey, randomBytes, verify } from 'node:crypto';
import { mkdir, readFile, realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import type { V1Pod, V1Volume } from '@kubernetes/client-node';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  cleanCertificateChain,
  generatePodCertificateKey,
  POD_CERTIFICATE_KEY_TYPES,
  PodCertificateManager,
  type PodCertificateApi,
  type PodCertificateRequest,
} from '../../../core/certificates/index.ts';
import { isNodeletError, nodeletError } from '../../../core/errors/catalogue.ts';
import type { Events } from '../../../core/events/index.ts';
import { prepareVolumes, volumeFailures } from '../../../core/volumes/prepare.ts';
import { reportPodCertificateStates } from '../../../core/metrics/index.ts';
import { registry } from '../../../core/metrics/kubelet-metrics.ts';
import { probeVolumePlugins } from '../../../core/agent/volume-plugins.ts';
import type { PodCertificateSource } from '../../../core/volumes/index.ts';
import { FakeObjectSource, memoryLogger, tempDir } from '../volumes/fakes.ts';

const MIN = 60_000;

/** A PEM block of random bytes: the manager never parses the chain, it only cleans it. */
const fakeCert = (label = 'CERTIFICATE') =>
  `-----BEGIN ${label}-----\n${randomBytes(90)
    .toString('base64')
    .match(/.{1,64}/g)!
    .join('\n')}\n-----END ${label}-----\n`;

/** The parts of a DER stub request: its signed info, the signature, the public key (SPKI DER). */
function parseStub(der: Buffer): { info: Buffer; spki: Buffer; signature: Buffer } {
  const tlv = (b: Buffer, at: number) => {
    let len = b[at + 1]!;
    let head = 2;
    if (len & 0x80) {
      const n = len & 0x7f;
      len = 0;
      for (let i = 0; i < n; i++) len = len * 256 + b[at + 2 + i]!;
      head = 2 + n;
    }
    return { tag: b[at]!, start: at, body: at + head, end: at + head + len };
  };
  const outer = tlv(der, 0);
  const info = tlv(der, outer.body);
  const algo = tlv(der, info.end);
  const sig = tlv(der, algo.end);
  const version = tlv(der, info.body);
  const subject = tlv(der, version.end);
  const spki = tlv(der, subject.end);
  const attrs = tlv(der, spki.end);
  expect([outer.tag, info.tag, version.tag, subject.tag, spki.tag, attrs.tag, sig.tag]).toEqual([0x30, 0x30, 0x02, 0x30, 0x30, 0xa0, 0x03]);
  expect(subject.end - subject.body).toBe(0); // empty subject
  expect(attrs.end - attrs.body).toBe(0); // no attributes
  expect(outer.end).toBe(der.length);
  return { info: der.subarray(info.start, info.end), spki: der.subarray(spki.start, spki.end), signature: der.subarray(sig.body + 1, sig.end) };
}

describe('pod certificate keys', () => {
  it.each(POD_CERTIFICATE_KEY_TYPES)('%s: a PKCS#8 key and an empty PKCS#10 request signed with it, for that key', async (keyType) => {
    const k = await generatePodCertificateKey(keyType);
    expect(k.privateKeyPem).toMatch(/^-----BEGIN PRIVATE KEY-----\n[\s\S]+\n-----END PRIVATE KEY-----\n$/);
    const priv = createPrivateKey(k.privateKeyPem);
    const detail = priv.asymmetricKeyDetails!;
    const expected: Record<string, object> = {
      RSA3072: { modulusLength: 3072 },
      RSA4096: { modulusLength: 4096 },
      ECDSAP256: { namedCurve: 'prime256v1' },
      ECDSAP384: { namedCurve: 'secp384r1' },
      ECDSAP521: { namedCurve: 'secp521r1' },
      ED25519: {},
    };
    expect(detail).toMatchObject(expected[keyType]!);
    const { info, spki, signature } = parseStub(k.stubCsrDer);
    const pub = createPublicKey(priv);
    expect(spki.equals(pub.export({ type: 'spki', format: 'der' }))).toBe(true);
    const hash = keyType === 'ED25519' ? null : keyType === 'ECDSAP384' ? 'sha384' : keyType === 'ECDSAP521' ? 'sha512' : 'sha256';
    expect(verify(hash, info, pub, signature)).toBe(true);
  });

  it('refuses an unknown key type with the supported ones', async () => {
    await expect(generatePodCertificateKey('DSA1024')).rejects.toThrow(
      /unknown key type "DSA1024"; supported: RSA3072, RSA4096, ECDSAP256, ECDSAP384, ECDSAP521, ED25519/,
    );
  });

  it('cleans a chain as upstream: CERTIFICATE blocks only, no headers or text between them (cleanCertificateChain)', () => {
    const a = fakeCert();
    const b = fakeCert('TRUSTED CERTIFICATE');
    const withHeaders = b.replace('-----\n', '-----\nProc-Type: 4,ENCRYPTED\nDEK-Info: x\n\n');
    const cleaned = cleanCertificateChain(`leaf follows\n${a}some comment\n${withHeaders}trailing`);
    const blocks = cleaned.match(/-----BEGIN CERTIFICATE-----\n[\s\S]*?-----END CERTIFICATE-----\n/g)!;
    expect(blocks).toHaveLength(2);
    expect(cleaned).toBe(blocks.join(''));
    expect(blocks[0]).toBe(a);
    expect(blocks[1]).toBe(b.replace('TRUSTED CERTIFICATE', 'CERTIFICATE').replace('TRUSTED CERTIFICATE', 'CERTIFICATE'));
    expect(cleanCertificateChain('no pem here')).toBe('');
  });
});

/** An in-memory apiserver for PodCertificateRequests, with a watch whose visibility tests control. */
class FakeApi implements PodCertificateApi {
  readonly pcrs = new Map<string, PodCertificateRequest>();
  readonly created: PodCertificateRequest[] = [];
  createError?: string;
  createAttempts = 0;
  /** False: the watch does not show requests (informer lag, or deleted). */
  visible = true;
  watches = 0;
  nodeReads = 0;
  private changed?: (r: PodCertificateRequest) => void;

  constructor(private readonly now: () => number) {}

  async create(r: PodCertificateRequest): Promise<PodCertificateRequest> {
    this.createAttempts++;
    if (this.createError) throw nodeletError('NDL_POD_CERTIFICATE', `cannot create PodCertificateRequest: ${this.createError}`);
    const name = `req-${this.created.length + 1}`;
    const made: PodCertificateRequest = {
      ...r,
      metadata: { ...r.metadata, name, uid: `pcr-uid-${name}`, creationTimestamp: new Date(this.now()).toISOString() },
      spec: { maxExpirationSeconds: 86400, ...r.spec },
    };
    this.created.push(made);
    this.pcrs.set(name, made);
    this.changed?.(made);
    return made;
  }

  async serviceAccountUid(namespace: string, name: string) {
    return `sa-uid-${namespace}-${name}`;
  }

  async nodeUid() {
    this.nodeReads++;
    return 'node-uid-1';
  }

  watch(changed: (r: PodCertificateRequest) => void) {
    this.watches++;
    this.changed = changed;
    return {
      get: (_ns: string, name: string) => (this.visible ? this.pcrs.get(name) : undefined),
      stop: () => {
        this.watches--;
        this.changed = undefined;
      },
    };
  }

  private setStatus(name: string, status: PodCertificateRequest['status']) {
    const pcr = this.pcrs.get(name)!;
    const next = { ...pcr, status };
    this.pcrs.set(name, next);
    this.changed?.(next);
  }

  issue(name: string, chain: string, t: { beginRefreshAt: number; notAfter: number }) {
    this.setStatus(name, {
      conditions: [{ type: 'Issued', status: 'True', reason: 'Reason', message: 'Issued' }],
      certificateChain: chain,
      notBefore: new Date(this.now()).toISOString(),
      beginRefreshAt: new Date(t.beginRefreshAt).toISOString(),
      notAfter: new Date(t.notAfter).toISOString(),
    });
  }

  conclude(name: string, type: 'Denied' | 'Failed', reason: string, message: string) {
    this.setStatus(name, { conditions: [{ type, status: 'True', reason, message }] });
  }

  delete(name: string) {
    const pcr = this.pcrs.get(name)!;
    this.pcrs.delete(name);
    this.changed?.(pcr);
  }
}

function certPod(
  sources: V1Volume['projected'] = {
    sources: [{ podCertificate: { signerName: 'example.com/signer', keyType: 'ECDSAP256', credentialBundlePath: 'bundle.pem' } }],
  },
): V1Pod {
  return {
    metadata: { name: 'web', namespace: 'ns1', uid: '0b0b0b0b-0000-4000-8000-000000000001' },
    spec: { nodeName: 'node-a', serviceAccountName: 'builder', containers: [{ name: 'app', image: 'x' }], volumes: [{ name: 'tls', projected: sources }] },
  };
}

describe('PodCertificateManager', () => {
  let clock: number;
  let api: FakeApi;
  let events: { reason: string; note: string; type: string; name: string }[];
  let manager: PodCertificateManager;
  let changes: string[][];
  const eventSink: Events = { emit: (r, type, reason, note) => events.push({ reason, note, type, name: r.name }) };

  beforeEach(() => {
    clock = Date.parse('2026-01-01T00:00:00Z');
    api = new FakeApi(() => clock);
    events = [];
    changes = [];
    manager = new PodCertificateManager({ api, nodeName: 'node-a', events: eventSink, log: memoryLogger(), now: () => clock, random: () => 0 });
    manager.onChange((uids) => changes.push(uids));
  });
  afterEach(() => manager.stop());

  /** The bundle, or the message it fails with. */
  const read = (pod: V1Pod) => {
    try {
      const b = manager.credentialBundle(pod, 'tls', 0);
      return { key: b.privateKey.toString(), chain: b.certificateChain.toString() };
    } catch (e) {
      if (!isNodeletError(e, 'NDL_POD_CERTIFICATE')) throw e;
      return e.detail;
    }
  };
  const created = (n: number) => vi.waitFor(() => expect(api.created).toHaveLength(n));

  it('creates a request for the pod on first read; the pod waits until it is issued (TestTransitionInitialToWait)', async () => {
    const pod = certPod({
      sources: [
        {
          podCertificate: {
            signerName: 'example.com/signer',
            keyType: 'ED25519',
            maxExpirationSeconds: 3600,
            credentialBundlePath: 'b.pem',
            userAnnotations: { 'example.com/path': '/w' },
          },
        },
      ],
    });
    expect(read(pod)).toMatch(/^credential bundle is not issued yet$/);
    await created(1);
    const pcr = api.created[0]!;
    expect(pcr.metadata).toMatchObject({
      namespace: 'ns1',
      generateName: 'req-',
      ownerReferences: [{ apiVersion: 'v1', kind: 'Pod', name: 'web', uid: pod.metadata!.uid }],
    });
    expect({ ...pcr.spec, stubPKCS10Request: undefined }).toEqual({
      signerName: 'example.com/signer',
      podName: 'web',
      podUID: pod.metadata!.uid,
      serviceAccountName: 'builder',
      serviceAccountUID: 'sa-uid-ns1-builder',
      nodeName: 'node-a',
      nodeUID: 'node-uid-1',
      maxExpirationSeconds: 3600,
      stubPKCS10Request: undefined,
      unverifiedUserAnnotations: { 'example.com/path': '/w' },
    });
    expect(read(pod)).toBe('credential bundle is not issued yet: PodCertificateRequest ns1/req-1 awaits signer example.com/signer');
    expect(api.created).toHaveLength(1);
    expect(changes).toEqual([]);
  });

  it('serves key then chain once Issued, re-syncs the pod at once, and refreshes from beginRefreshAt with a new key (TestFullFlow)', async () => {
    const pod = certPod();
    read(pod);
    await created(1);
    const chain1 = fakeCert() + fakeCert();
    api.issue('req-1', `junk\n${chain1}`, { beginRefreshAt: clock + 30 * MIN, notAfter: clock + 60 * MIN });
    await vi.waitFor(() => expect(changes).toEqual([[pod.metadata!.uid]]));
    expect(manager.changedSince(pod.metadata!.uid!, clock)).toBe(true);
    expect(manager.changedSince(pod.metadata!.uid!, clock + 1)).toBe(false);
    const first = read(pod) as { key: string; chain: string };
    expect(first.chain).toBe(chain1);
    // The key handed out is the one the request was for.
    const stub = parseStub(Buffer.from(api.created[0]!.spec.stubPKCS10Request, 'base64'));
    expect(stub.spki.equals(createPublicKey(first.key).export({ type: 'spki', format: 'der' }))).toBe(true);

    // Before beginRefreshAt nothing happens; from it on a new request is made and the old bundle is served meanwhile.
    clock += 29 * MIN;
    read(pod);
    await new Promise((r) => setTimeout(r, 20));
    expect(api.created).toHaveLength(1);
    clock += 1 * MIN;
    expect(read(pod)).toEqual(first);
    await created(2);
    expect(read(pod)).toEqual(first);
    const chain2 = fakeCert();
    clock += MIN;
    api.issue('req-2', chain2, { beginRefreshAt: clock + 30 * MIN, notAfter: clock + 60 * MIN });
    await vi.waitFor(() => expect(changes).toHaveLength(2));
    const second = read(pod) as { key: string; chain: string };
    expect(second.chain).toBe(chain2);
    expect(second.key).not.toBe(first.key);
    expect(events).toEqual([]);
  });

  it('adds up to 5 minutes of jitter to beginRefreshAt', async () => {
    manager.stop();
    manager = new PodCertificateManager({ api, nodeName: 'node-a', events: eventSink, log: memoryLogger(), now: () => clock, random: () => 0.5 });
    const pod = certPod();
    expect(() => manager.credentialBundle(pod, 'tls', 0)).toThrow(/not issued yet/);
    await created(1);
    api.issue('req-1', fakeCert(), { beginRefreshAt: clock + 30 * MIN, notAfter: clock + 60 * MIN });
    await vi.waitFor(() => expect(() => manager.credentialBundle(pod, 'tls', 0)).not.toThrow());
    clock += 32 * MIN; // < 30 min + 2.5 min of jitter
    manager.credentialBundle(pod, 'tls', 0);
    await new Promise((r) => setTimeout(r, 20));
    expect(api.created).toHaveLength(1);
    clock += MIN;
    manager.credentialBundle(pod, 'tls', 0);
    await created(2);
  });

  it.each([
    ['Denied', 'denied', 'UnsupportedKeyType', 'use ED25519'],
    ['Failed', 'failed', 'SignerDown', 'HSM offline'],
  ] as const)('a %s request is final: a warning event once, and every read fails with the reason', async (type, word, reason, message) => {
    const pod = certPod();
    read(pod);
    await created(1);
    api.conclude('req-1', type, reason, message);
    await vi.waitFor(() => expect(events).toHaveLength(1));
    expect(events[0]).toEqual({
      type: 'Warning',
      reason: type,
      name: 'web',
      note: `PodCertificateRequest ns1/req-1 ${type === 'Denied' ? 'was denied' : 'failed'}, reason="${reason}", message="${message}"`,
    });
    expect(changes).toEqual([[pod.metadata!.uid]]);
    expect(read(pod)).toBe(`PodCertificateRequest ns1/req-1 was permanently ${word}: reason="${reason}" message="${message}"`);
    clock += 60 * MIN;
    read(pod);
    await new Promise((r) => setTimeout(r, 20));
    expect(api.created).toHaveLength(1);
    expect(events).toHaveLength(1);
  });

  it('a refresh request that is denied ends the pod certificate too, as upstream', async () => {
    const pod = certPod();
    read(pod);
    await created(1);
    api.issue('req-1', fakeCert(), { beginRefreshAt: clock + 30 * MIN, notAfter: clock + 60 * MIN });
    await vi.waitFor(() => expect(typeof read(pod)).toBe('object'));
    clock += 31 * MIN;
    read(pod);
    await created(2);
    api.conclude('req-2', 'Denied', 'Revoked', 'no more');
    await vi.waitFor(() => expect(read(pod)).toMatch(/req-2 was permanently denied: reason="Revoked"/));
  });

  it('a request the watch does not show for 10 minutes is made again (TestPCRDeletedWhileWaiting)', async () => {
    const pod = certPod();
    read(pod);
    await created(1);
    api.delete('req-1');
    clock += 9 * MIN;
    read(pod);
    await new Promise((r) => setTimeout(r, 20));
    expect(api.created).toHaveLength(1);
    clock += 2 * MIN;
    read(pod);
    await created(2);
    expect(read(pod)).toMatch(/awaits signer/);
  });

  it('shows why a request cannot be made, and retries it with a back-off', async () => {
    api.createError = 'podcertificaterequests.certificates.k8s.io is forbidden: PodCertificateRequest feature gate is disabled';
    const pod = certPod();
    read(pod);
    await vi.waitFor(() => expect(api.createAttempts).toBeGreaterThanOrEqual(3)); // 20 ms, then 40 ms
    expect(api.created).toHaveLength(0);
    expect(read(pod)).toMatch(/^credential bundle is not issued yet: cannot create PodCertificateRequest: .*feature gate is disabled$/);
    api.createError = undefined;
    await created(1);
    expect(api.nodeReads).toBe(api.createAttempts); // a failed create reads the node's UID again
    expect(read(pod)).toMatch(/awaits signer/);
  });

  it('warns once when a refresh is overdue and once when the served certificate expired', async () => {
    const pod = certPod();
    read(pod);
    await created(1);
    api.issue('req-1', fakeCert(), { beginRefreshAt: clock + 30 * MIN, notAfter: clock + 60 * MIN });
    await vi.waitFor(() => expect(typeof read(pod)).toBe('object'));
    clock += 30 * MIN;
    read(pod);
    await created(2);
    clock += 11 * MIN;
    read(pod);
    await vi.waitFor(() => expect(events.map((e) => e.reason)).toEqual(['CertificateOverdueForRefresh']));
    clock += 20 * MIN;
    read(pod);
    read(pod);
    await vi.waitFor(() => expect(events.map((e) => e.reason)).toEqual(['CertificateOverdueForRefresh', 'CertificateExpired']));
    expect(events[1]!.note).toBe('PodCertificate expired');
    expect(typeof read(pod)).toBe('object'); // the expired bundle is still what the pod has
  });

  it('reports the sources by signer and state for kubelet_podcertificate_states, and the gauge reads them at scrape time', async () => {
    const a = certPod();
    const b = certPod();
    b.metadata!.uid = '0b0b0b0b-0000-4000-8000-000000000002';
    read(a);
    read(b);
    await created(2);
    const sorted = () => manager.metricReport().sort((x, y) => x.state.localeCompare(y.state));
    expect(sorted()).toEqual([{ signerName: 'example.com/signer', state: 'not_yet_issued', count: 2 }]);
    api.issue('req-1', fakeCert(), { beginRefreshAt: clock + 30 * MIN, notAfter: clock + 60 * MIN });
    api.conclude('req-2', 'Denied', 'No', 'no');
    await vi.waitFor(() => expect(changes).toHaveLength(2));
    expect(sorted().map((c) => [c.state, c.count])).toEqual([
      ['denied', 1],
      ['fresh', 1],
    ]);
    clock += 41 * MIN; // past beginRefreshAt + 10 min, no refresh driven
    expect(sorted().map((c) => c.state)).toEqual(['denied', 'overdue_for_refresh']);
    clock += 20 * MIN;
    expect(sorted().map((c) => c.state)).toEqual(['denied', 'expired']);

    reportPodCertificateStates(() => manager.metricReport());
    const text = await registry.metrics();
    expect(text).toContain('kubelet_podcertificate_states{signer_name="example.com/signer",state="expired"} 1');
    expect(text).toContain('kubelet_podcertificate_states{signer_name="example.com/signer",state="denied"} 1');
    reportPodCertificateStates(() => []);
  });

  it('keeps one record per source, watches while any is kept, and forgets a pod', async () => {
    const pod = certPod({
      sources: [
        { podCertificate: { signerName: 'example.com/a', keyType: 'ECDSAP256', keyPath: 'a.key', certificateChainPath: 'a.crt' } },
        { podCertificate: { signerName: 'example.com/b', keyType: 'ECDSAP384', credentialBundlePath: 'b.pem' } },
      ],
    });
    expect(() => manager.credentialBundle(pod, 'tls', 0)).toThrow(/not issued yet/);
    expect(() => manager.credentialBundle(pod, 'tls', 1)).toThrow(/not issued yet/);
    expect(() => manager.credentialBundle(pod, 'tls', 2)).toThrow(/volume "tls" has no podCertificate source at index 2/);
    await created(2);
    expect(api.created.map((p) => p.spec.signerName).sort()).toEqual(['example.com/a', 'example.com/b']);
    expect(api.watches).toBe(1);
    manager.forgetPod(pod.metadata!.uid!);
    expect(api.watches).toBe(0);
  });
});

describe('projected podCertificate volumes', () => {
  let dir: string;
  let cleanup: () => Promise<void>;
  let podDir: string;

  beforeEach(async () => {
    ({ dir, cleanup } = await tempDir());
    dir = await realpath(dir);
    podDir = path.join(dir, 'pods', 'uid');
    await mkdir(podDir, { recursive: true });
  });
  afterEach(() => cleanup());

  const prepare = (pod: V1Pod, podCertificates?: PodCertificateSource) =>
    prepareVolumes(pod, {
      podDir,
      source: new FakeObjectSource(),
      ...(podCertificates ? { podCertificates } : {}),
      nodeName: 'node-a',
      hostIP: '10.0.0.5',
      log: memoryLogger(),
      plugins: probeVolumePlugins(),
    });
  const fixed: PodCertificateSource = { credentialBundle: () => ({ privateKey: Buffer.from('KEY\n'), certificateChain: Buffer.from('LEAF\nCA\n') }) };
  const modeOf = async (p: string) => (await stat(p)).mode & 0o777;

  it('writes the bundle (key then chain) and the separate files at the paths asked, with defaultMode', async () => {
    const pod = certPod({
      defaultMode: 0o640,
      sources: [
        {
          podCertificate: {
            signerName: 'example.com/s',
            keyType: 'ED25519',
            credentialBundlePath: 'creds/bundle.pem',
            keyPath: 'tls.key',
            certificateChainPath: 'tls.crt',
          },
        },
      ],
    });
    const v = (await prepare(pod, fixed)).get('tls')!;
    expect(await readFile(path.join(v.hostPath, 'creds/bundle.pem'), 'utf8')).toBe('KEY\nLEAF\nCA\n');
    expect(await readFile(path.join(v.hostPath, 'tls.key'), 'utf8')).toBe('KEY\n');
    expect(await readFile(path.join(v.hostPath, 'tls.crt'), 'utf8')).toBe('LEAF\nCA\n');
    expect(await modeOf(path.join(v.hostPath, 'tls.key'))).toBe(0o640);
  });

  it('writes 0600 files when the pod sets fsGroup, as upstream', async () => {
    const pod = certPod();
    pod.spec!.securityContext = { fsGroup: 2000 };
    const v = (await prepare(pod, fixed)).get('tls')!;
    expect(await modeOf(path.join(v.hostPath, 'bundle.pem'))).toBe(0o600);
  });

  it('fails the volume with the reason while not issued, and without an API server', async () => {
    const waiting: PodCertificateSource = {
      credentialBundle: () => {
        throw nodeletError('NDL_POD_CERTIFICATE', 'credential bundle is not issued yet');
      },
    };
    const failed = await prepare(certPod(), waiting).catch((e: unknown) => e);
    expect(volumeFailures(failed)?.map((f) => f.message)).toEqual(['credential bundle is not issued yet']);
    const standalone = await prepare(certPod()).catch((e: unknown) => e);
    expect(volumeFailures(standalone)?.map((f) => f.message)).toEqual(['podCertificate sources need an API server (standalone mode has none)']);
  });

  it('with the real manager: the pod waits, gets the issued bundle, and its file is rewritten by a refresh', async () => {
    let clock = Date.now();
    const api = new FakeApi(() => clock);
    const manager = new PodCertificateManager({ api, nodeName: 'node-a', events: { emit: () => {} }, log: memoryLogger(), now: () => clock, random: () => 0 });
    try {
      const pod = certPod();
      pod.metadata!.uid = 'uid';
      expect(volumeFailures(await prepare(pod, manager).catch((e: unknown) => e))![0]!.message).toBe('credential bundle is not issued yet');
      await vi.waitFor(() => expect(api.created).toHaveLength(1));
      const chain1 = fakeCert();
      api.issue('req-1', chain1, { beginRefreshAt: clock + 30 * MIN, notAfter: clock + 60 * MIN });
      await vi.waitFor(() => expect(manager.changedSince('uid', clock)).toBe(true));
      const file = path.join((await prepare(pod, manager)).get('tls')!.hostPath, 'bundle.pem');
      const first = await readFile(file, 'utf8');
      expect(first).toMatch(/^-----BEGIN PRIVATE KEY-----\n[\s\S]+-----END PRIVATE KEY-----\n-----BEGIN CERTIFICATE-----/);
      expect(first.endsWith(chain1)).toBe(true);

      clock += 30 * MIN;
      await prepare(pod, manager);
      await vi.waitFor(() => expect(api.created).toHaveLength(2));
      expect(await readFile(file, 'utf8')).toBe(first);
      const chain2 = fakeCert();
      api.issue('req-2', chain2, { beginRefreshAt: clock + 30 * MIN, notAfter: clock + 60 * MIN });
      await vi.waitFor(() => expect(manager.changedSince('uid', clock)).toBe(true));
      await prepare(pod, manager);
      const second = await readFile(file, 'utf8');
      expect(second.endsWith(chain2)).toBe(true);
      expect(second.split('-----END PRIVATE KEY-----')[0]).not.toBe(first.split('-----END PRIVATE KEY-----')[0]);
    } finally {
      manager.stop();
    }
  });
});
