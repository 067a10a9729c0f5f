/**
 * Images end to end: real registries (anonymous and htpasswd), the real
 * control plane and nodelet. The same module in the three formats runs; an
 * index picks its Wasm entry; imagePullSecrets work and their absence shows the
 * registry's reason; a tampered blob never runs; 50 replicas pull once; a module
 * published with `nodelet push` runs.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import type { V1Pod, V1PodSpec } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { pushCompatImage } from '../harness/compat-image.ts';
import { nodeBinary } from '../harness/node-binary.ts';
import { pushImage, pushIndex, pushWasmArtifact } from '../harness/oci-push.ts';
import { startRegistry, type TestRegistry } from '../harness/registry.ts';
import { buildWasmModule } from '../harness/wasm-modules.ts';
import { WASM_TOLERATION } from './support/images.ts';
import { adminClients, eventually, podNamespace, waitNodeReady, podUntil } from './support/kube.ts';
import { kubectl } from './support/kubectl.ts';
import { startNodelet, type NodeletProcess } from './support/nodelet-process.ts';

const BIN = resolve(import.meta.dirname, '..', '..', 'bin', 'nodelet.mjs');
const AUTH = { username: 'puller', password: 's3cr3t' };

/** `mod` plus a custom section, so each test gets a module with its own digest. */
function variant(mod: Buffer, tag: string): Buffer {
  const leb = (n: number) => {
    const out: number[] = [];
    do {
      let b = n & 0x7f;
      n >>>= 7;
      if (n) b |= 0x80;
      out.push(b);
    } while (n);
    return Buffer.from(out);
  };
  const name = Buffer.from('nodelet-test');
  const content = Buffer.concat([leb(name.length), name, Buffer.from(tag)]);
  return Buffer.concat([mod, Buffer.from([0]), leb(content.length), content]);
}

describe('images on nodelet', () => {
  const info = inject('cluster');
  const k = adminClients(info);
  const nodeName = 'images-n1';
  let nodelet: NodeletProcess;
  let reg: TestRegistry;
  let secured: TestRegistry;
  let ns: string;
  let hello: Buffer;
  let sleep: Buffer;

  beforeAll(async () => {
    [reg, secured] = await Promise.all([startRegistry(), startRegistry({ auth: AUTH })]);
    hello = await readFile(await buildWasmModule('hello'));
    sleep = await readFile(await buildWasmModule('sleep'));
    nodelet = await startNodelet(info, nodeName);
    ns = await podNamespace(k.core, 'images');
    await waitNodeReady(k.core, nodeName);
    const dockerconfig = { auths: { [secured.host]: { auth: Buffer.from(`${AUTH.username}:${AUTH.password}`).toString('base64') } } };
    await k.core.createNamespacedSecret({
      namespace: ns,
      body: { metadata: { name: 'regcred' }, type: 'kubernetes.io/dockerconfigjson', stringData: { '.dockerconfigjson': JSON.stringify(dockerconfig) } },
    });
  });
  afterAll(async () => {
    await nodelet?.dispose();
    await reg?.stop();
    await secured?.stop();
  });

  const create = (name: string, spec: Partial<V1PodSpec>) =>
    k.core.createNamespacedPod({
      namespace: ns,
      body: { metadata: { name }, spec: { nodeName, tolerations: [WASM_TOLERATION], restartPolicy: 'Never', containers: [], ...spec } as V1PodSpec },
    });
  const until = (name: string, what: string, ok: (p: V1Pod) => boolean, ms = 60_000) => podUntil(k.core, ns, name, what, ok, ms);
  const succeeded = (name: string) => until(name, 'Succeeded', (p) => p.status?.phase === 'Succeeded');
  const logs = (name: string) => kubectl(info, ['logs', '-n', ns, name]).stdout;
  const waiting = (p: V1Pod) => p.status?.containerStatuses?.[0]?.state?.waiting;

  it('runs the same module published as a CNCF artifact, a wasm-to-oci artifact and a compat OCI image', async () => {
    const cncf = await pushWasmArtifact(reg.host, 'formats/cncf', 'v1', hello, { format: 'cncf' });
    const w2o = await pushWasmArtifact(reg.host, 'formats/wasm-to-oci', 'v1', hello, { format: 'wasm-to-oci' });
    const compat = await pushCompatImage(reg.host, 'formats/compat', 'v1', hello, { entrypoint: '/bin/hello.wasm', extraFiles: { 'etc/readme': 'x' } });
    const pushed = { cncf, 'wasm-to-oci': w2o, compat };
    for (const f of Object.keys(pushed))
      await create(`fmt-${f}`, { containers: [{ name: 'main', image: `${reg.host}/formats/${f}:v1`, args: [`format-${f}`] }] });
    for (const [f, p] of Object.entries(pushed)) {
      const pod = await succeeded(`fmt-${f}`);
      expect(pod.status!.containerStatuses![0]!.imageID).toBe(`${reg.host}/formats/${f}@${p.digest}`);
      expect(logs(`fmt-${f}`)).toContain(`arg 1 format-${f}`);
    }
  });

  it('picks the wasip1/wasm entry of a multi-platform image index', async () => {
    const wasm = await pushWasmArtifact(reg.host, 'multi', 'wasm', hello);
    const linux = await pushCompatImage(reg.host, 'multi', 'linux', Buffer.from('\x7fELF not wasm'), { entrypoint: '/bin/app' });
    const arm = await pushImage(reg.host, 'multi', 'arm', { mediaType: 'application/vnd.oci.image.config.v1+json', bytes: Buffer.from('{"arm":1}') }, [
      { mediaType: 'application/vnd.oci.image.layer.v1.tar+gzip', bytes: Buffer.from('not a tarball') },
    ]);
    const index = await pushIndex(reg.host, 'multi', 'v1', [
      { digest: linux.digest, size: linux.manifest.length, os: 'linux', architecture: 'amd64' },
      { digest: arm.digest, size: arm.manifest.length, os: 'linux', architecture: 'arm64' },
      { digest: wasm.digest, size: wasm.manifest.length, os: 'wasip1', architecture: 'wasm' },
    ]);
    await create('index', { containers: [{ name: 'main', image: `${reg.host}/multi:v1`, args: ['from-index'] }] });
    const pod = await succeeded('index');
    expect(pod.status!.containerStatuses![0]!.imageID).toBe(`${reg.host}/multi@${index.digest}`);
    expect(logs('index')).toContain('arg 1 from-index');
  });

  it("with an htpasswd registry, the right imagePullSecrets run the pod and none gives the registry's reason", async () => {
    await pushWasmArtifact(secured.host, 'private/hello', 'v1', hello, { auth: AUTH });
    const image = `${secured.host}/private/hello:v1`;
    await create('with-secret', { imagePullSecrets: [{ name: 'regcred' }], containers: [{ name: 'main', image, args: ['authorized'] }] });
    await succeeded('with-secret');
    expect(logs('with-secret')).toContain('arg 1 authorized');
    // The module is now cached on the node; a pod without the secret must still be refused
    // (upstream's "ensure secret pulled images"): nodelet asks the registry with its credentials.
    await create('without-secret', { containers: [{ name: 'main', image }] });
    const denied = await until('without-secret', 'ErrImagePull', (p) => ['ErrImagePull', 'ImagePullBackOff'].includes(waiting(p)?.reason ?? ''));
    expect(denied.status?.phase).toBe('Pending');
    expect(waiting(denied)!.message).toContain(`failed to pull image "${image}": unauthorized: authentication required`);
    const backoff = await until('without-secret', 'ImagePullBackOff', (p) => waiting(p)?.reason === 'ImagePullBackOff', 30_000);
    expect(waiting(backoff)!.message).toContain('unauthorized: authentication required');
  });

  it('rejects a tampered blob and never runs it: the pod waits in ErrImagePull naming the digest', async () => {
    const mod = variant(hello, 'tampered');
    const pushed = await pushWasmArtifact(reg.host, 'tampered', 'v1', mod);
    const layer = pushed.layers[0]!;
    const evil = Buffer.from(mod);
    evil[evil.length - 1] ^= 0xff;
    await writeFile(reg.blobDataPath(layer.digest), evil);
    await create('tampered', { containers: [{ name: 'main', image: `${reg.host}/tampered:v1` }] });
    // ErrImagePull after each attempt, ImagePullBackOff between attempts; both carry the pull error.
    const pod = await until('tampered', 'ErrImagePull', (p) => ['ErrImagePull', 'ImagePullBackOff'].includes(waiting(p)?.reason ?? ''));
    expect(waiting(pod)!.message).toContain(`blob ${layer.digest}: received content has digest sha256:`);
    expect(existsSync(join(nodelet.rootDir, 'images', 'blobs', 'sha256', layer.digest.slice(7)))).toBe(false);
    expect(pod.status!.containerStatuses![0]!.state?.running).toBeUndefined();
    expect(pod.status!.containerStatuses![0]!.restartCount).toBe(0);
    // Events are sent one at a time after the status (as upstream's broadcaster): wait for them.
    const events = await eventually(
      'tampered events',
      async () => {
        const l = await k.core.listNamespacedEvent({ namespace: ns, fieldSelector: 'involvedObject.name=tampered' });
        return l.items.some((e) => e.reason === 'Failed' && e.message === 'Error: ErrImagePull') ? l : undefined;
      },
      10_000,
    );
    const reasons = events.items.map((e) => e.reason);
    expect(events.items.filter((e) => e.reason === 'Failed').map((e) => e.message)).toContain('Error: ErrImagePull');
    expect(reasons).not.toContain('Started');
    expect(reasons).not.toContain('Created');
  });

  it('50 replicas of one Deployment pull the module once', async () => {
    await pushWasmArtifact(reg.host, 'replicas', 'v1', variant(sleep, 'replicas'));
    const labels = { app: 'replicas' };
    await k.apps.createNamespacedDeployment({
      namespace: ns,
      body: {
        metadata: { name: 'replicas' },
        spec: {
          replicas: 50,
          selector: { matchLabels: labels },
          template: {
            metadata: { labels },
            spec: {
              tolerations: [WASM_TOLERATION],
              nodeSelector: { 'kubernetes.io/hostname': nodeName },
              terminationGracePeriodSeconds: 1,
              containers: [{ name: 'main', image: `${reg.host}/replicas:v1`, args: ['3600'] }],
            },
          },
        },
      },
    });
    const running = await eventually(
      '50 replicas Running',
      async () => {
        const pods = await k.core.listNamespacedPod({ namespace: ns, labelSelector: 'app=replicas' });
        const n = pods.items.filter((p) => p.status?.containerStatuses?.[0]?.state?.running).length;
        return n === 50 ? pods.items : undefined;
      },
      170_000,
      1000,
    );
    expect(new Set(running.map((p) => p.status!.containerStatuses![0]!.imageID)).size).toBe(1);
    expect(await reg.blobGets('replicas')).toBe(1);
    await k.apps.deleteNamespacedDeployment({ name: 'replicas', namespace: ns });
    await eventually(
      'replicas gone',
      async () => (await k.core.listNamespacedPod({ namespace: ns, labelSelector: 'app=replicas' })).items.length === 0,
      120_000,
      1000,
    );
  }, 300_000);

  it('a module published with `nodelet push` runs (in a pod, and once with `nodelet run`)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'nodelet-e2e-push-'));
    try {
      writeFileSync(join(dir, 'config.json'), JSON.stringify({ auths: { [secured.host]: { username: AUTH.username, password: AUTH.password } } }));
      const file = join(dir, 'hello.wasm');
      writeFileSync(file, variant(hello, 'pushed-by-nodelet'));
      const image = `${secured.host}/pushed/hello:v1`;
      const { stdout } = await promisify(execFile)(nodeBinary(), [BIN, 'push', file, image], { env: { ...process.env, DOCKER_CONFIG: dir } });
      const digest = stdout.trim();
      await create('pushed', { imagePullSecrets: [{ name: 'regcred' }], containers: [{ name: 'main', image, args: ['pushed'] }] });
      const pod = await succeeded('pushed');
      expect(pod.status!.containerStatuses![0]!.imageID).toBe(`${secured.host}/pushed/hello@${digest}`);
      expect(logs('pushed')).toContain('arg 1 pushed');
      // The same image through `nodelet run`: pulled into its own store and run once here.
      const ran = await promisify(execFile)(nodeBinary(), [BIN, 'run', '--root-dir', join(dir, 'store'), image, '--', 'via-run'], {
        env: { ...process.env, DOCKER_CONFIG: dir },
      });
      expect(ran.stdout).toContain('arg 1 via-run');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
