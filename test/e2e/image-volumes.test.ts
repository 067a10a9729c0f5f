/**
 * Image volumes end to end (KEP-4639): a real registry, the real control plane
 * and nodelet; WASI modules read the content of plain OCI images (tar and
 * tar+gzip layers, a whiteout) and of an artifact through `spec.volumes[].image`,
 * and what they print is read back through the apiserver's pod logs. Cases
 * ported from upstream's node e2e test/e2e_node/image_volume.go say which `It`
 * they come from.
 */
import { readdirSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import type { V1Pod, V1PodSpec } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { makeTar, OCI_IMAGE_CONFIG, OCI_LAYER_TAR, OCI_LAYER_TAR_GZIP } from '../harness/compat-image.ts';
import { OCI_MANIFEST, pushBlob, pushImage, pushManifest, type Pushed } from '../harness/oci-push.ts';
import { startRegistry, type TestRegistry } from '../harness/registry.ts';
import { buildWasmModule } from '../harness/wasm-modules.ts';
import { pushModule, WASM_TOLERATION } from './support/images.ts';
import { adminClients, eventually, podNamespace, podUntil, waitNodeReady } from './support/kube.ts';
import { kubectl } from './support/kubectl.ts';
import { startNodelet, type NodeletProcess } from './support/nodelet-process.ts';

describe('image volumes on nodelet', () => {
  const info = inject('cluster');
  const k = adminClients(info);
  const nodeName = 'imgvol-n1';
  let nodelet: NodeletProcess;
  let reg: TestRegistry;
  let ns: string;
  let readFileImage: string;
  let writeFileImage: string;
  let sleepImage: string;
  /** The volume image: what upstream's kitten image holds (data.json, etc/os-release, etc/passwd), in two layers. */
  let kitten: Pushed;
  let kittenRef: string;

  beforeAll(async () => {
    reg = await startRegistry();
    readFileImage = await pushModule(reg, 'read-file');
    writeFileImage = await pushModule(reg, 'write-file');
    sleepImage = await pushModule(reg, 'sleep');
    const config = { mediaType: OCI_IMAGE_CONFIG, bytes: Buffer.from('{"architecture":"amd64","os":"linux","rootfs":{"type":"layers","diff_ids":[]}}') };
    const lower = makeTar({ 'etc/os-release': 'NAME="Debian"', 'etc/passwd': 'root:x:0:0:root:/root:/bin/sh', 'tmp/stale': 'stale' });
    const upper = makeTar({ 'data.json': '{"image":"kitten.jpg"}', 'etc/os-release': 'NAME="Alpine Linux"', 'tmp/.wh.stale': '' });
    kitten = await pushImage(reg.host, 'volumes/kitten', 'v1', config, [
      { mediaType: OCI_LAYER_TAR_GZIP, bytes: gzipSync(lower) },
      { mediaType: OCI_LAYER_TAR, bytes: upper },
    ]);
    kittenRef = `${reg.host}/volumes/kitten:v1`;
    nodelet = await startNodelet(info, nodeName);
    ns = await podNamespace(k.core, 'imgvol');
    await waitNodeReady(k.core, nodeName);
  });
  afterAll(async () => {
    await nodelet?.dispose();
    await reg?.stop();
  });

  const create = (name: string, spec: Partial<V1PodSpec>) =>
    k.core.createNamespacedPod({
      namespace: ns,
      body: {
        metadata: { name },
        spec: {
          tolerations: [WASM_TOLERATION],
          nodeSelector: { 'kubernetes.io/hostname': nodeName },
          restartPolicy: 'Never',
          containers: [],
          ...spec,
        } as V1PodSpec,
      },
    });
  const until = (name: string, what: string, ok: (p: V1Pod) => boolean, ms = 60_000) => podUntil(k.core, ns, name, what, ok, ms);
  const succeeded = (name: string) => until(name, 'Succeeded', (p) => p.status?.phase === 'Succeeded');
  const logs = (name: string, container?: string) => kubectl(info, ['logs', '-n', ns, name, ...(container ? ['-c', container] : [])]).stdout;
  const waiting = (p: V1Pod, container = 'main') => p.status?.containerStatuses?.find((c) => c.name === container)?.state?.waiting;
  const events = async (name: string) => (await k.core.listNamespacedEvent({ namespace: ns, fieldSelector: `involvedObject.name=${name}` })).items;

  // Upstream: "should succeed with pod and pull policy of Always".
  it('a Wasm pod reads the files of an image volume (layers applied in order, a whiteout honoured)', async () => {
    await create('always', {
      volumes: [{ name: 'volume', image: { reference: kittenRef, pullPolicy: 'Always' } }],
      containers: [
        {
          name: 'main',
          image: readFileImage,
          args: ['/volume/data.json', '/volume/etc/os-release', '/volume/tmp/stale'],
          volumeMounts: [{ name: 'volume', mountPath: '/volume' }],
        },
      ],
    });
    const pod = await until('always', 'Failed', (p) => p.status?.phase === 'Failed');
    const out = logs('always');
    expect(out).toContain('content /volume/data.json: {"image":"kitten.jpg"}');
    expect(out).toContain('content /volume/etc/os-release: NAME="Alpine Linux"');
    // Deleted by the upper layer's whiteout: read-file exits 1 for it.
    expect(out).toContain('cannot open /volume/tmp/stale: No such file or directory');
    expect(pod.status!.containerStatuses![0]!.state!.terminated!.exitCode).toBe(1);
    const reasons = (await eventually('Pulled event', async () => ((await events('always')).some((e) => e.reason === 'Pulled') ? events('always') : undefined)))
      .filter((e) => !e.involvedObject.fieldPath)
      .map((e) => `${e.reason}: ${e.message}`);
    expect(reasons).toContain(`Pulling: Pulling image "${kittenRef}"`);
    expect(reasons.some((r) => r.startsWith(`Pulled: Successfully pulled image "${kittenRef}" in `))).toBe(true);
  });

  // Upstream: "should succeed with pod and multiple volumes".
  it('mounts two image volumes of one pod, both read-only: a write fails with EROFS', async () => {
    await create('multi', {
      volumes: [
        { name: 'volume-0', image: { reference: kittenRef } },
        { name: 'volume-1', image: { reference: kittenRef } },
      ],
      containers: [
        {
          name: 'main',
          image: readFileImage,
          args: ['/volume-0/data.json', '/volume-1/etc/os-release'],
          volumeMounts: [
            { name: 'volume-0', mountPath: '/volume-0' },
            { name: 'volume-1', mountPath: '/volume-1' },
          ],
        },
        { name: 'write', image: writeFileImage, args: ['/volume-0/data.json', 'overwritten'], volumeMounts: [{ name: 'volume-0', mountPath: '/volume-0' }] },
      ],
    });
    await until('multi', 'both containers terminated', (p) => (p.status?.containerStatuses ?? []).filter((c) => c.state?.terminated).length === 2);
    expect(logs('multi', 'main')).toContain('content /volume-0/data.json: {"image":"kitten.jpg"}');
    expect(logs('multi', 'main')).toContain('content /volume-1/etc/os-release: NAME="Alpine Linux"');
    expect(logs('multi', 'write')).toContain('cannot write /volume-0/data.json: Read-only file system');
    const tree = join(nodelet.rootDir, 'images', 'trees', 'sha256', kitten.digest.slice(7));
    expect(await readFile(join(tree, 'data.json'), 'utf8')).toBe('{"image":"kitten.jpg"}');
  });

  // Upstream: "should succeed with multiple pods and same image on the same node".
  it('two pods using the same image share one tree, pulled once', async () => {
    const gets = await reg.blobGets('volumes/kitten');
    for (const name of ['same-0', 'same-1']) {
      await create(name, {
        volumes: [{ name: 'volume', image: { reference: kittenRef } }],
        containers: [{ name: 'main', image: readFileImage, args: ['/volume/data.json'], volumeMounts: [{ name: 'volume', mountPath: '/volume' }] }],
      });
    }
    for (const name of ['same-0', 'same-1']) {
      await succeeded(name);
      expect(logs(name)).toContain('content /volume/data.json: {"image":"kitten.jpg"}');
    }
    // IfNotPresent (the default for a tag other than latest): no layer fetched again.
    expect(await reg.blobGets('volumes/kitten')).toBe(gets);
    expect(readdirSync(join(nodelet.rootDir, 'images', 'trees', 'sha256'))).toContain(kitten.digest.slice(7));
    const node = await eventually(
      'the image in status.images',
      async () => {
        const n = await k.core.readNode({ name: nodeName });
        return n.status?.images?.some((i) => i.names?.includes(`${reg.host}/volumes/kitten@${kitten.digest}`)) ? n : undefined;
      },
      30_000,
    );
    expect(node.status!.images!.find((i) => i.names?.includes(kittenRef))).toBeDefined();
  });

  // Upstream: "subPath" / "should succeed when using a valid subPath".
  it('mounts a subPath of the image', async () => {
    await create('subpath', {
      volumes: [{ name: 'volume', image: { reference: kittenRef } }],
      containers: [{ name: 'main', image: readFileImage, args: ['/volume/passwd'], volumeMounts: [{ name: 'volume', mountPath: '/volume', subPath: 'etc' }] }],
    });
    await succeeded('subpath');
    expect(logs('subpath')).toContain('content /volume/passwd: root:x:0:0');
  });

  // Upstream: "subPath" / "should fail if subPath in volume is not existing".
  it('a subPath missing from the image is CreateContainerError', async () => {
    await create('subpath-missing', {
      volumes: [{ name: 'volume', image: { reference: kittenRef } }],
      containers: [
        { name: 'main', image: readFileImage, args: ['/volume/x'], volumeMounts: [{ name: 'volume', mountPath: '/volume', subPath: 'not-existing' }] },
      ],
    });
    const pod = await until('subpath-missing', 'CreateContainerError', (p) => waiting(p)?.reason === 'CreateContainerError');
    expect(waiting(pod)!.message).toBe('failed to prepare subPath for volumeMount "volume": "not-existing" does not exist in the image');
    expect(readdirSync(join(nodelet.rootDir, 'images', 'trees', 'sha256', kitten.digest.slice(7), 'etc'))).not.toContain('not-existing');
  });

  // Upstream: "should fail if image volume is not existing".
  it('an image volume that cannot be pulled: ErrImagePull, then ImagePullBackOff naming the image; other pods are unaffected', async () => {
    const missing = `${reg.host}/volumes/invalid:v1`;
    await create('missing', {
      volumes: [{ name: 'volume', image: { reference: missing } }],
      containers: [{ name: 'main', image: readFileImage, args: ['/volume/data.json'], volumeMounts: [{ name: 'volume', mountPath: '/volume' }] }],
    });
    await create('neighbour', {
      restartPolicy: 'Always',
      volumes: [{ name: 'volume', image: { reference: kittenRef } }],
      containers: [{ name: 'main', image: sleepImage, args: ['3600'], volumeMounts: [{ name: 'volume', mountPath: '/volume' }] }],
    });
    const backoff = await until('missing', 'ImagePullBackOff', (p) => waiting(p)?.reason === 'ImagePullBackOff', 60_000);
    expect(backoff.status!.phase).toBe('Pending');
    expect(waiting(backoff)!.message).toMatch(
      new RegExp(
        `^Back-off pulling image "${missing.replaceAll('.', '\\.')}": ErrImagePull: failed to pull image "${missing.replaceAll('.', '\\.')}": .*manifest unknown`,
      ),
    );
    const failed = await eventually(
      'Failed event naming the image',
      async () => {
        const list = await events('missing');
        const pull = list.some((e) => e.reason === 'Failed' && e.message?.startsWith(`Failed to pull image "${missing}"`));
        return pull && list.some((e) => e.reason === 'Failed' && e.involvedObject.fieldPath) ? list : undefined;
      },
      20_000,
    );
    expect(failed.filter((e) => e.reason === 'Failed' && e.message?.startsWith('Failed to pull image'))[0]!.involvedObject.fieldPath).toBeUndefined();
    expect(failed.some((e) => e.reason === 'BackOff' && e.message === `Back-off pulling image "${missing}"`)).toBe(true);
    // On the container that mounts it, the reason (upstream's `Error: <reason>`).
    expect(failed.some((e) => e.reason === 'Failed' && e.involvedObject.fieldPath === 'spec.containers{main}' && e.message === 'Error: ErrImagePull')).toBe(
      true,
    );
    // The neighbour, with a volume of its own, runs meanwhile.
    const neighbour = await until('neighbour', 'Running', (p) => p.status?.containerStatuses?.[0]?.state?.running !== undefined);
    expect(neighbour.status!.phase).toBe('Running');
    await k.core.deleteNamespacedPod({ name: 'neighbour', namespace: ns, gracePeriodSeconds: 0 });
  });

  // Upstream: "should succeed if image volume is not existing but unused".
  it('an image volume that cannot be pulled but is mounted by no container does not stop the pod', async () => {
    await create('unused', {
      volumes: [{ name: 'volume', image: { reference: `${reg.host}/volumes/invalid:v1` } }],
      containers: [{ name: 'main', image: readFileImage, args: ['/volume/data.json'] }],
    });
    const pod = await until('unused', 'Failed', (p) => p.status?.phase === 'Failed');
    // It ran: the module had no /volume preopen, so its read failed inside the module.
    expect(pod.status!.containerStatuses![0]!.state!.terminated!.exitCode).toBe(1);
    expect(logs('unused')).toContain('cannot open /volume/data.json');
  });

  it('mounts an OCI artifact: each layer a file named by its title annotation', async () => {
    const empty = await pushBlob(reg.host, 'volumes/plugins', { mediaType: 'application/vnd.oci.empty.v1+json', bytes: Buffer.from('{}') });
    const plugin = await pushBlob(reg.host, 'volumes/plugins', { mediaType: 'application/wasm', bytes: await readFile(await buildWasmModule('hello')) });
    const rules = await pushBlob(reg.host, 'volumes/plugins', { mediaType: 'text/plain', bytes: Buffer.from('allow: all') });
    const titled = (d: typeof plugin, title: string) => ({ ...d, annotations: { 'org.opencontainers.image.title': title } });
    await pushManifest(
      reg.host,
      'volumes/plugins',
      'v1',
      {
        schemaVersion: 2,
        mediaType: OCI_MANIFEST,
        artifactType: 'application/vnd.example.plugins',
        config: empty,
        layers: [titled(plugin, 'filters/hello.wasm'), titled(rules, 'rules.txt')],
      },
      OCI_MANIFEST,
    );
    await create('artifact', {
      volumes: [{ name: 'plugins', image: { reference: `${reg.host}/volumes/plugins:v1` } }],
      containers: [{ name: 'main', image: readFileImage, args: ['/plugins/rules.txt'], volumeMounts: [{ name: 'plugins', mountPath: '/plugins' }] }],
    });
    await succeeded('artifact');
    expect(logs('artifact')).toContain('content /plugins/rules.txt: allow: all');
  });
});
