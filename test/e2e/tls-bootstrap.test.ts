/**
 * Certificates end to end, against the real control plane:
 *
 * - a node on nodelet's defaults (only `--kubeconfig`): its self-signed
 *   `kubelet.crt` parses in Go, so `kubectl logs` and `logs -f` work through an
 *   apiserver that does not verify kubelet serving certificates (kubeadm's
 *   default; a second apiserver on the same etcd), while the harness's verifying
 *   apiserver refuses it;
 * - a node joined with only the bootstrap token: the real controller-manager
 *   approves (csrapproving) and signs (csrsigning, 2-minute certificates) its
 *   client CSR; its serving CSR is approved with `kubectl certificate approve`;
 *   the verifying apiserver then serves its logs; client and serving
 *   certificates rotate while `kubectl logs -f` keeps streaming.
 */
import { execFile, execFileSync, spawnSync } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { existsSync, lstatSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import tls from 'node:tls';
import { promisify } from 'node:util';
import * as k8s from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { parseCsr } from '../../core/certificates/index.ts';
import { startExtraApiServer, type ExtraApiServer } from '../cluster/control-plane.ts';
import { nodeBinary } from '../harness/node-binary.ts';
import { startRegistry, type TestRegistry } from '../harness/registry.ts';
import { pushModule, WASM_TOLERATION } from './support/images.ts';
import { adminClients, eventually, podNamespace, podUntil, waitNodeReady } from './support/kube.ts';
import { kubectl, kubectlStream } from './support/kubectl.ts';
import { startNodelet, type NodeletProcess } from './support/nodelet-process.ts';

const info = inject('cluster');
const k = adminClients(info);
const csrApi = k.kc.makeApiClient(k8s.CertificatesV1Api);
let reg: TestRegistry;
let sleepImage: string;
let ns: string;

beforeAll(async () => {
  reg = await startRegistry();
  sleepImage = await pushModule(reg, 'sleep');
  ns = await podNamespace(k.core, 'certs');
}, 120_000);
afterAll(async () => {
  await reg?.stop();
});

/** A pod printing `tick <n>` every second, pinned to `nodeName`; resolves when Running. */
async function ticker(nodeName: string, name: string): Promise<void> {
  await k.core.createNamespacedPod({
    namespace: ns,
    body: {
      metadata: { name },
      spec: {
        tolerations: [WASM_TOLERATION],
        nodeSelector: { 'kubernetes.io/hostname': nodeName },
        containers: [{ name: 'main', image: sleepImage, args: ['3600'] }],
      },
    },
  });
  await podUntil(k.core, ns, name, 'Running', (p) => p.status?.phase === 'Running', 90_000);
}

/** The certificate a new TLS connection to the node's kubelet API is served. */
function servedCertificate(port: number): Promise<X509Certificate> {
  return new Promise((resolve, reject) => {
    const s = tls.connect({ host: '127.0.0.1', port, rejectUnauthorized: false }, () => {
      const c = s.getPeerX509Certificate();
      s.destroy();
      if (c) resolve(c);
      else reject(new Error('no peer certificate'));
    });
    s.on('error', reject);
  });
}

const ticks = (lines: string[]) => lines.filter((l) => l.startsWith('tick ')).map((l) => Number(l.slice(5)));

describe("a node on nodelet's defaults (only --kubeconfig)", () => {
  const nodeName = 'certs-defaults';
  let nodelet: NodeletProcess;
  let plain: ExtraApiServer;

  beforeAll(async () => {
    [plain, nodelet] = await Promise.all([startExtraApiServer(info, { verifyKubelets: false }), startNodelet(info, nodeName, [], 'defaults')]);
    await waitNodeReady(k.core, nodeName, 90_000);
  }, 180_000);
  afterAll(async () => {
    await nodelet?.dispose();
    await plain?.peer.stop();
  });

  it('serves a self-signed kubelet.crt that Go parses: kubectl logs and logs -f work through an apiserver that does not verify kubelet certificates', async () => {
    const crt = join(nodelet.rootDir, 'pki', 'kubelet.crt');
    expect(existsSync(join(nodelet.rootDir, 'pki', 'kubelet.key'))).toBe(true);
    const leaf = new X509Certificate(readFileSync(crt));
    expect(leaf.subject).toMatch(new RegExp(`^CN=${nodeName}@\\d+$`));
    expect((await servedCertificate(nodelet.port)).fingerprint256).toBe(leaf.fingerprint256);

    await ticker(nodeName, 'defaults-ticker');
    // The pod network on its defaults: an IP from the node's podCIDR, held on the default bridge nodelet0.
    const podCIDR = (await k.core.readNode({ name: nodeName })).spec?.podCIDR;
    const podIP = (await k.core.readNamespacedPod({ name: 'defaults-ticker', namespace: ns })).status?.podIP;
    expect(podCIDR).toMatch(/^10\.\d+\.\d+\.0\/24$/);
    expect(podIP?.startsWith(podCIDR!.split('.').slice(0, 3).join('.') + '.')).toBe(true);
    expect(execFileSync('ip', ['-o', 'addr', 'show', 'dev', 'nodelet0'], { encoding: 'utf8' })).toContain(`inet ${podIP}/32`);
    const once = await eventually(
      'kubectl logs through the non-verifying apiserver',
      () => {
        const r = kubectl(info, ['logs', '-n', ns, 'defaults-ticker'], plain.adminKubeconfig);
        return r.status === 0 && r.stdout.startsWith('sleeping 3600') ? r : undefined;
      },
      30_000,
      1000,
    );
    expect(once.stderr).toBe('');
    const follow = kubectlStream(info, ['logs', '-f', '-n', ns, 'defaults-ticker'], plain.adminKubeconfig);
    try {
      await eventually('two streamed ticks', () => ticks(follow.lines).length >= 2, 20_000);
      expect(follow.lines[0]).toBe('sleeping 3600');
    } finally {
      follow.kill();
    }

    // The harness's own apiserver verifies kubelet serving certificates against the cluster CA: a
    // self-signed one is refused there (that case needs --rotate-server-certificates, below).
    const verified = kubectl(info, ['logs', '-n', ns, 'defaults-ticker']);
    expect(verified.status).not.toBe(0);
    expect(verified.stderr).toContain('x509: certificate signed by unknown authority');
  });
});

describe('a node joined with only a bootstrap token', () => {
  const nodeName = 'certs-boot';
  const tokenId = info.bootstrapToken.split('.')[0]!;
  let nodelet: NodeletProcess;
  let approver: NodeJS.Timeout | undefined;
  const approved: string[] = [];
  const pki = () => join(nodelet.rootDir, 'pki');
  const pems = (prefix: string) =>
    readdirSync(pki())
      .filter((f) => new RegExp(`^${prefix}-\\d{4}(-\\d{2}){5}\\.pem$`).test(f))
      .sort();
  const nodeCsrs = async (signer: string) => {
    const items = (await csrApi.listCertificateSigningRequest()).items.filter((c) => c.spec.signerName === signer);
    const subjects = await Promise.all(items.map(async (c) => (await parseCsr(Buffer.from(c.spec.request, 'base64').toString())).subject));
    return items.filter((_, i) => subjects[i] === `O=system:nodes, CN=system:node:${nodeName}`);
  };

  beforeAll(async () => {
    nodelet = await startNodelet(info, nodeName, ['--rotate-certificates', '--rotate-server-certificates'], 'bootstrap');
    // An operator approving this node's serving CSRs as they come, with kubectl.
    let busy = false;
    approver = setInterval(() => {
      if (busy) return;
      busy = true;
      void (async () => {
        for (const c of await nodeCsrs('kubernetes.io/kubelet-serving')) {
          if (c.status?.conditions?.length) continue;
          await promisify(execFile)(join(info.binDir, 'kubectl'), [`--kubeconfig=${info.adminKubeconfig}`, 'certificate', 'approve', c.metadata!.name!]);
          approved.push(c.metadata!.name!);
        }
      })()
        .catch(() => undefined)
        .finally(() => {
          busy = false;
        });
    }, 1000);
    await waitNodeReady(k.core, nodeName, 90_000);
  }, 120_000);
  afterAll(async () => {
    clearInterval(approver);
    await nodelet?.dispose();
  });

  it("a wrong bootstrap token stops nodelet at start with the apiserver's reason, writing no credentials", () => {
    const root = mkdtempSync(join(tmpdir(), 'certs-badtoken-'));
    try {
      const bad = join(root, 'bootstrap.kubeconfig');
      writeFileSync(bad, readFileSync(info.bootstrapKubeconfig, 'utf8').replace(info.bootstrapToken, `${tokenId}.0000000000000000`));
      const r = spawnSync(
        nodeBinary(),
        [
          join(import.meta.dirname, '..', '..', 'bin', 'nodelet.mjs'),
          `--bootstrap-kubeconfig=${bad}`,
          `--kubeconfig=${join(root, 'kubelet.conf')}`,
          `--root-dir=${root}`,
          '--hostname-override=certs-badtoken',
          '--port=0',
          '--healthz-port=0',
        ],
        { encoding: 'utf8', timeout: 60_000 },
      );
      expect(r.status).toBe(1);
      expect(r.stdout + r.stderr).toContain('TLS bootstrap failed: cannot create CertificateSigningRequest: Unauthorized');
      expect(existsSync(join(root, 'kubelet.conf'))).toBe(false);
      expect(existsSync(join(root, 'pki', 'kubelet-client-current.pem'))).toBe(false);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it('its client CSR is approved and signed by the real controller-manager; it is Ready as system:node:<name>', async () => {
    // The one made with the bootstrap token (later ones, by the node itself, are rotations).
    const boot = (await nodeCsrs('kubernetes.io/kube-apiserver-client-kubelet')).find((c) => c.spec.username === `system:bootstrap:${tokenId}`);
    expect(boot!.metadata!.name).toMatch(/^node-csr-[A-Za-z0-9_-]{43}$/);
    expect(boot!.spec.groups).toContain('system:bootstrappers');
    expect(boot!.spec.usages).toEqual(['digital signature', 'client auth']);
    expect(boot!.status?.conditions?.find((c) => c.type === 'Approved')?.reason).toBe('AutoApproved');
    expect(boot!.status?.certificate).toBeTruthy();

    expect(pems('kubelet-client').length).toBeGreaterThanOrEqual(1);
    const current = join(pki(), 'kubelet-client-current.pem');
    expect(lstatSync(current).isSymbolicLink()).toBe(true);
    expect(lstatSync(join(pki(), pems('kubelet-client')[0]!)).mode & 0o777).toBe(0o600);
    const kubeconfig = readFileSync(nodelet.kubeconfig, 'utf8');
    expect(kubeconfig).toContain(`client-certificate: ${current}`);
    expect(kubeconfig).toContain(`client-key: ${current}`);
    expect(kubeconfig).not.toContain(info.bootstrapToken);

    const whoami = kubectl(info, ['auth', 'whoami', '-o', 'json'], nodelet.kubeconfig);
    expect(whoami.stderr).toBe('');
    const user = JSON.parse(whoami.stdout).status.userInfo;
    expect(user.username).toBe(`system:node:${nodeName}`);
    expect(user.groups).toContain('system:nodes');
  });

  it('its serving certificate comes from an approved kubelet-serving CSR, and the verifying apiserver serves kubectl logs (logs -f: next test)', async () => {
    const [serving] = await eventually(
      'an approved serving CSR',
      async () => {
        const l = (await nodeCsrs('kubernetes.io/kubelet-serving')).filter((c) => c.status?.certificate);
        return l.length ? l : undefined;
      },
      30_000,
      500,
    );
    expect(serving!.spec.username).toBe(`system:node:${nodeName}`);
    expect(serving!.spec.usages).toEqual(['digital signature', 'server auth']);
    expect(serving!.status?.conditions?.find((c) => c.type === 'Approved')?.reason).toBe('KubectlApprove');
    const served = await eventually(
      'the issued serving certificate on the kubelet API',
      async () => {
        const c = await servedCertificate(nodelet.port).catch(() => undefined);
        return c?.checkIssued(new X509Certificate(readFileSync(info.caCert))) ? c : undefined;
      },
      30_000,
      500,
    );
    expect(served.subject).toBe(`O=system:nodes\nCN=system:node:${nodeName}`);
    expect(served.subjectAltName).toContain('IP Address:127.0.0.1');

    await ticker(nodeName, 'boot-ticker');
    const once = await eventually(
      'kubectl logs through the verifying apiserver',
      () => {
        const r = kubectl(info, ['logs', '-n', ns, 'boot-ticker']);
        return r.status === 0 && r.stdout.startsWith('sleeping 3600') ? r : undefined;
      },
      30_000,
      1000,
    );
    expect(once.stderr).toBe('');
  });

  it('client and serving certificates rotate at 70-90 % of their lifetime, in place, while kubectl logs -f keeps streaming', async () => {
    const follow = kubectlStream(info, ['logs', '-f', '-n', ns, 'boot-ticker']);
    try {
      await eventually('the stream started', () => ticks(follow.lines).length >= 1, 20_000);
      const firstClient = new X509Certificate(readFileSync(join(pki(), pems('kubelet-client')[0]!)));
      const firstServing = new X509Certificate(readFileSync(join(pki(), pems('kubelet-server')[0]!)));
      const lifetime = (c: X509Certificate) => Date.parse(c.validTo) - Date.parse(c.validFrom);
      // The signer backdates by 5 minutes: a 2-minute certificate spans 7, so rotation falls 4.9-6.3 minutes
      // after notBefore, i.e. at most 78 s after it was issued.
      expect(lifetime(firstClient)).toBe(7 * 60_000);

      await eventually(
        'a rotated client and serving certificate',
        () => pems('kubelet-client').length >= 2 && pems('kubelet-server').length >= 2,
        150_000,
        1000,
      );
      const all = (await csrApi.listCertificateSigningRequest()).items;
      for (const [prefix, first] of [
        ['kubelet-client', firstClient],
        ['kubelet-server', firstServing],
      ] as const) {
        const second = new X509Certificate(readFileSync(join(pki(), pems(prefix)[1]!)));
        // When nodelet asked for the second certificate: the creation time of the CSR it was issued for.
        const csr = all.find(
          (c) => c.status?.certificate && new X509Certificate(Buffer.from(c.status.certificate, 'base64')).fingerprint256 === second.fingerprint256,
        );
        const requestedAt = Date.parse(String(csr!.metadata!.creationTimestamp));
        const fraction = (requestedAt - Date.parse(first.validFrom)) / lifetime(first);
        // 70-90 %, or at once when the jittered deadline had already passed when the first was issued (the
        // signer's 5-minute backdating puts issue time at 71 %); timestamps are whole seconds.
        expect(fraction, prefix).toBeGreaterThanOrEqual(0.69);
        expect(fraction, prefix).toBeLessThanOrEqual(0.91);
      }
      const nowServed = await servedCertificate(nodelet.port);
      const currentServing = new X509Certificate(readFileSync(join(pki(), 'kubelet-server-current.pem')));
      expect(nowServed.serialNumber).toBe(currentServing.serialNumber);
      expect(nowServed.serialNumber).not.toBe(firstServing.serialNumber);

      // Past the first client certificate's expiry the node still renews its Lease: nodelet's API clients
      // switched to the rotated certificate without a restart.
      const expired = Date.parse(firstClient.validTo);
      await eventually('the first client certificate expired', () => Date.now() > expired + 12_000, 150_000, 1000);
      const lease = JSON.parse(kubectl(info, ['get', 'lease', '-n', 'kube-node-lease', nodeName, '-o', 'json']).stdout);
      expect(Date.parse(lease.spec.renewTime)).toBeGreaterThan(expired);
      await waitNodeReady(k.core, nodeName, 5_000);
      expect(nodelet.peer.proc.exitCode).toBeNull();

      // The stream never broke: every tick arrived, in order, and it is still open.
      const got = ticks(follow.lines);
      expect(got).toEqual(got.map((_, i) => got[0]! + i));
      const before = got.length;
      await eventually('more ticks', () => ticks(follow.lines).length > before + 1, 10_000);
      expect(await Promise.race([follow.done, new Promise((r) => setTimeout(() => r('open'), 100))])).toBe('open');
      expect(readFileSync(nodelet.logFile, 'utf8')).not.toMatch(/rotation failed|Unauthorized/);
    } finally {
      follow.kill();
    }
  }, 240_000);
});
