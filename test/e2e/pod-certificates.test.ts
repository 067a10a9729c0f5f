/**
 * Pod certificates (KEP-4317; the control plane runs with the
 * PodCertificateRequest gate and certificates.k8s.io/v1beta1): Wasm pods with
 * `podCertificate` projected sources, a signer of the test's own
 * (support/pod-certificate-signer.ts, a service account with a signer's RBAC
 * only), everything through the apiserver:
 *
 * - the pod reads its credential bundle and its key and chain files; they
 *   carry the key nodelet generated and the chain the signer issued, and the
 *   PodCertificateRequests name the pod, its service account and the node;
 * - a request the signer denies leaves the pod waiting, with a `Denied` event
 *   and FailedMount events that give the signer's reason;
 * - `/metrics` counts the sources by signer and state;
 * - nodelet's node identity may only watch its own node's requests and only
 *   request certificates for its own pods (Node authorizer, NodeRestriction).
 *
 * Refresh is not shown here: the apiserver requires `beginRefreshAt` at least
 * 10 minutes after `notBefore`, and `notBefore` within 5 minutes of its clock,
 * so no refresh can begin within 5 minutes of issuance (plus upstream's 0-5
 * minutes of jitter). test/unit/certificates/pod-certificates.test.ts shows a
 * refresh rewriting the volume's file with the real manager and plugin.
 */
import { spawnSync } from 'node:child_process';
import { createPrivateKey, X509Certificate } from 'node:crypto';
import { join } from 'node:path';
import * as k8s from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startRegistry, type TestRegistry } from '../harness/registry.ts';
import { pushModule, WASM_TOLERATION } from './support/images.ts';
import { adminClients, eventually, eventsOnce, podNamespace, podUntil, waitNodeReady } from './support/kube.ts';
import { kubectl } from './support/kubectl.ts';
import { kubeletGet } from './support/kubelet-api.ts';
import { startNodelet, type NodeletProcess } from './support/nodelet-process.ts';
import { SPIFFE_PATH_KEY, startTestSigner, type TestSigner } from './support/pod-certificate-signer.ts';

const SIGNER = 'example.com/test-signer';

/** A PodCertificateRequest as the admin reads it. */
interface Pcr {
  metadata: { name: string; ownerReferences?: { kind: string; name: string; uid: string }[] };
  spec: Record<string, unknown> & { podName: string; stubPKCS10Request: string };
  status?: { certificateChain?: string; conditions?: { type: string; reason?: string }[] };
}

/** The `content <path>: <data>` sections of read-file's output, by path. */
function filesOf(logs: string): Map<string, string> {
  const out = new Map<string, string>();
  const parts = logs.split(/^content (\S+): /m);
  for (let i = 1; i + 1 < parts.length; i += 2) out.set(parts[i]!, parts[i + 1]!.replace(/\n$/, ''));
  return out;
}

const pemBlocks = (text: string, label: string) => text.match(new RegExp(`-----BEGIN ${label}-----\\n[\\s\\S]*?-----END ${label}-----\\n`, 'g')) ?? [];

describe('podCertificate projected volumes', () => {
  const info = inject('cluster');
  const k = adminClients(info);
  const nodeName = 'podcert-n1';
  let nodelet: NodeletProcess;
  let reg: TestRegistry;
  let signer: TestSigner;
  let ns: string;
  let readFile: string;

  beforeAll(async () => {
    reg = await startRegistry();
    readFile = await pushModule(reg, 'read-file');
    [nodelet, signer, ns] = await Promise.all([startNodelet(info, nodeName), startTestSigner(info, k.kc, SIGNER), podNamespace(k.core, 'podcert')]);
    await waitNodeReady(k.core, nodeName);
  });
  afterAll(async () => {
    await nodelet?.dispose();
    await signer?.stop();
    await reg?.stop();
  });

  const pcrsOf = async (podName: string): Promise<Pcr[]> =>
    (JSON.parse(kubectl(info, ['get', 'podcertificaterequests.v1beta1.certificates.k8s.io', '-n', ns, '-o', 'json']).stdout).items as Pcr[]).filter(
      (p) => p.spec.podName === podName,
    );

  const createPod = (name: string, sources: k8s.V1VolumeProjection[], args: string[]) =>
    k.core.createNamespacedPod({
      namespace: ns,
      body: {
        metadata: { name },
        spec: {
          tolerations: [WASM_TOLERATION],
          nodeSelector: { 'kubernetes.io/hostname': nodeName },
          restartPolicy: 'Never',
          volumes: [{ name: 'tls', projected: { sources } }],
          containers: [{ name: 'main', image: readFile, args, volumeMounts: [{ name: 'tls', mountPath: '/run/tls' }] }],
        },
      },
    });

  // Ports upstream test/e2e/auth/projected_podcertificate.go, "should honor UserAnnotations for SPIFFE URI path",
  // "should issue certificate with default life time (24h) when MaxExpirationSeconds is not set" and "should issue
  // certificate with specified duration (1h) when MaxExpirationSeconds is set", and the PodCertificateRequest checks of
  // test/integration/kubelet/podcertificatemanager_integration_test.go, TestPodCertificateManager.
  it('a Wasm pod reads its credential bundle and key/chain files: keys made by nodelet, chains issued by the signer, requests naming the pod, its service account and the node', async () => {
    await createPod(
      'reader',
      [
        {
          podCertificate: {
            signerName: SIGNER,
            keyType: 'ECDSAP256',
            credentialBundlePath: 'bundle.pem',
            userAnnotations: { [SPIFFE_PATH_KEY]: '/custom-workload' },
          },
        },
        { podCertificate: { signerName: SIGNER, keyType: 'ED25519', maxExpirationSeconds: 3600, keyPath: 'ed.key', certificateChainPath: 'ed.crt' } },
      ],
      ['/run/tls/bundle.pem', '/run/tls/ed.key', '/run/tls/ed.crt'],
    );
    const pod = await podUntil(k.core, ns, 'reader', 'Succeeded', (p) => p.status?.phase === 'Succeeded' || p.status?.phase === 'Failed', 90_000);
    expect(pod.status?.phase).toBe('Succeeded');
    const files = filesOf(kubectl(info, ['logs', '-n', ns, 'reader']).stdout);
    expect([...files.keys()]).toEqual(['/run/tls/bundle.pem', '/run/tls/ed.key', '/run/tls/ed.crt']);

    const root = new X509Certificate(signer.rootPem);
    const intermediate = new X509Certificate(signer.intermediatePem);
    /** The leaf of `chain`, checked: leaf then intermediate, each signed by the next, for `keyPem`. */
    const checkChain = (chain: string, keyPem: string) => {
      const certs = pemBlocks(chain, 'CERTIFICATE').map((c) => new X509Certificate(c));
      expect(certs.map((c) => c.fingerprint256)).toEqual([certs[0]!.fingerprint256, intermediate.fingerprint256]);
      expect(certs[0]!.verify(intermediate.publicKey)).toBe(true);
      expect(intermediate.verify(root.publicKey)).toBe(true);
      expect(certs[0]!.checkPrivateKey(createPrivateKey(keyPem))).toBe(true);
      return certs[0]!;
    };
    const lifetime = (c: X509Certificate) => Date.parse(c.validTo) - Date.parse(c.validFrom);

    // The bundle: the PKCS#8 key first, then the chain.
    const bundle = files.get('/run/tls/bundle.pem')!;
    const [key] = pemBlocks(bundle, 'PRIVATE KEY');
    expect(bundle.startsWith(key!)).toBe(true);
    expect(createPrivateKey(key!).asymmetricKeyDetails?.namedCurve).toBe('prime256v1');
    const ecLeaf = checkChain(bundle.slice(key!.length), key!);
    expect(ecLeaf.subjectAltName).toBe('URI:spiffe://cluster.local/custom-workload');
    expect(lifetime(ecLeaf)).toBe(24 * 3600_000);

    // The separate files.
    const edKey = files.get('/run/tls/ed.key')!;
    expect(createPrivateKey(edKey).asymmetricKeyType).toBe('ed25519');
    const edLeaf = checkChain(files.get('/run/tls/ed.crt')!, edKey);
    expect(edLeaf.subjectAltName).toBe(`URI:spiffe://cluster.local/ns/${ns}/sa/default`);
    expect(lifetime(edLeaf)).toBe(3600_000);

    // One request per source, as upstream's kubelet makes them; the chains the pod read are theirs.
    const sa = await k.core.readNamespacedServiceAccount({ name: 'default', namespace: ns });
    const node = await k.core.readNode({ name: nodeName });
    const pcrs = await pcrsOf('reader');
    expect(pcrs).toHaveLength(2);
    for (const p of pcrs) {
      expect(p.metadata.name).toMatch(/^req-/);
      expect(p.metadata.ownerReferences).toEqual([{ apiVersion: 'v1', kind: 'Pod', name: 'reader', uid: pod.metadata!.uid }]);
      expect(p.spec).toMatchObject({
        signerName: SIGNER,
        podName: 'reader',
        podUID: pod.metadata!.uid,
        serviceAccountName: 'default',
        serviceAccountUID: sa.metadata!.uid,
        nodeName,
        nodeUID: node.metadata!.uid,
      });
      expect(p.status?.conditions?.map((c) => c.type)).toEqual(['Issued']);
    }
    const ec = pcrs.find((p) => p.spec.maxExpirationSeconds === 86400)!;
    const ed = pcrs.find((p) => p.spec.maxExpirationSeconds === 3600)!;
    expect(ec.spec.unverifiedUserAnnotations).toEqual({ [SPIFFE_PATH_KEY]: '/custom-workload' });
    expect(bundle.slice(key!.length)).toBe(ec.status!.certificateChain);
    expect(files.get('/run/tls/ed.crt')).toBe(ed.status!.certificateChain);
  });

  it('a request the signer denies keeps the pod waiting: a Denied event and FailedMount events with the reason', async () => {
    await createPod('denied', [{ podCertificate: { signerName: SIGNER, keyType: 'RSA3072', credentialBundlePath: 'bundle.pem' } }], ['/run/tls/bundle.pem']);
    const [pcr] = await eventually('a denied request', async () => {
      const l = await pcrsOf('denied');
      return l[0]?.status?.conditions?.some((c) => c.type === 'Denied') ? l : undefined;
    });
    const reason = 'UnsupportedKeyType';
    const message = 'this signer issues ECDSA and Ed25519 keys only (got rsa); use ECDSAP256';
    const denied = await eventsOnce(k.core, ns, 'involvedObject.name=denied,reason=Denied', 30_000);
    expect(denied.map((e) => [e.type, e.message])).toEqual([
      ['Warning', `PodCertificateRequest ${ns}/${pcr!.metadata.name} was denied, reason="${reason}", message="${message}"`],
    ]);
    const failed = await eventually('a FailedMount with the reason', async () => {
      const l = (await k.core.listNamespacedEvent({ namespace: ns, fieldSelector: 'involvedObject.name=denied,reason=FailedMount' })).items;
      return l.find((e) => e.message?.includes('permanently denied'));
    });
    expect(failed.message).toBe(
      `MountVolume.SetUp failed for volume "tls" : PodCertificateRequest ${ns}/${pcr!.metadata.name} was permanently denied: reason="${reason}" message="${message}"`,
    );
    const pod = await k.core.readNamespacedPod({ name: 'denied', namespace: ns });
    expect(pod.status?.phase).toBe('Pending');
    expect(pod.status?.containerStatuses?.[0]?.state?.waiting?.reason).toBe('ContainerCreating');
    // Denied is final: no second request.
    expect(await pcrsOf('denied')).toHaveLength(1);
    expect(nodelet.peer.proc.exitCode).toBeNull();
  });

  // Read as the apiserver would, with its kubelet client certificate: it does not proxy to a node on loopback.
  it("/metrics counts the node's pod certificate sources by signer and state (kubelet_podcertificate_states)", async () => {
    const r = await kubeletGet(nodelet.port, '/metrics', info.caCert, { cert: info.kubeletClientCert, key: info.kubeletClientKey });
    expect(r.status).toBe(200);
    const states = r.body.split('\n').filter((l) => l.startsWith('kubelet_podcertificate_states{'));
    expect(states.sort()).toEqual([
      `kubelet_podcertificate_states{signer_name="${SIGNER}",state="denied"} 1`,
      `kubelet_podcertificate_states{signer_name="${SIGNER}",state="fresh"} 2`,
    ]);
  });

  // Ports test/integration/podcertificaterequests/podcertificate_integration_test.go, TestNodeRestriction ("node2 cannot
  // create PCR for pod on node1") and TestNodeAuthorization ("node2 cannot list with field selector for node1"), as nodelet's identity.
  it("nodelet's node identity watches only its own node's requests and requests certificates only for its own pods", async () => {
    const asNode = (args: string[]) => kubectl(info, args, nodelet.kubeconfig);
    const resource = 'podcertificaterequests.v1beta1.certificates.k8s.io';
    expect(asNode(['get', resource, '-A', `--field-selector=spec.nodeName=${nodeName}`]).status).toBe(0);
    expect(asNode(['get', resource, '-A']).stderr).toMatch(/forbidden.*can only list\/watch podcertificaterequests with nodeName field selector/);
    expect(asNode(['get', resource, '-A', '--field-selector=spec.nodeName=some-other-node']).stderr).toMatch(/forbidden/);

    await k.core.createNamespacedPod({
      namespace: ns,
      body: { metadata: { name: 'elsewhere' }, spec: { nodeName: 'podcert-other-node', containers: [{ name: 'main', image: readFile }] } },
    });
    const elsewhere = await k.core.readNamespacedPod({ name: 'elsewhere', namespace: ns });
    const sa = await k.core.readNamespacedServiceAccount({ name: 'default', namespace: ns });
    const node = await k.core.readNode({ name: nodeName });
    const [reader] = await pcrsOf('reader');
    const body = {
      apiVersion: 'certificates.k8s.io/v1beta1',
      kind: 'PodCertificateRequest',
      metadata: { generateName: 'req-', namespace: ns },
      spec: {
        signerName: SIGNER,
        podName: 'elsewhere',
        podUID: elsewhere.metadata!.uid,
        serviceAccountName: 'default',
        serviceAccountUID: sa.metadata!.uid,
        nodeName,
        nodeUID: node.metadata!.uid,
        maxExpirationSeconds: 86400,
        stubPKCS10Request: reader!.spec.stubPKCS10Request,
      },
    };
    const r = spawnSync(join(info.binDir, 'kubectl'), [`--kubeconfig=${nodelet.kubeconfig}`, 'create', '-f', '-'], {
      input: JSON.stringify(body),
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(r.status).not.toBe(0);
    expect(r.stderr).toMatch(new RegExp(`forbidden: pod "${ns}/elsewhere" is not running on node "${nodeName}"`));
    await k.core.deleteNamespacedPod({ name: 'elsewhere', namespace: ns, gracePeriodSeconds: 0 });
  });
});
