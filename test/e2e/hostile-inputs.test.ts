/**
 * Hostile inputs against a real control plane: static
 * pod manifest paths with a FIFO, an oversized file and names upstream
 * validation refuses; a single manifest file as the path; registries whose
 * error bodies carry a 2 MB message, whose blob body stalls, or whose compat
 * layers are not valid tar;
 * a device plugin whose 100 devices flip health every 10 ms.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import * as k8s from '@kubernetes/client-node';
import type { V1Node, V1Pod } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { pushRawCompatImage, rawTarEntry } from '../harness/compat-image.ts';
import { tinyModule } from '../harness/oci-push.ts';
import { startRegistry, type TestRegistry } from '../harness/registry.ts';
import { FakeDevicePlugin, registerWithKubelet, type FakeDevice } from '../unit/devices/fake-device-plugin.ts';
import { WASM_TOLERATION } from './support/images.ts';
import { adminClients, eventually, podNamespace, waitNodeReady } from './support/kube.ts';
import { startNodelet, type NodeletProcess } from './support/nodelet-process.ts';

const HELLO = resolve(import.meta.dirname, '..', '..', 'examples', 'static-pods', 'hello.wasm');
const staticPod = (name: string) => `apiVersion: v1
kind: Pod
metadata:
  name: ${name}
spec:
  restartPolicy: Never
  containers:
  - name: hello
    image: file:hello.wasm
`;

describe('hostile inputs', () => {
  const info = inject('cluster');
  const k = adminClients(info);
  const work = mkdtempSync(join(tmpdir(), 'nodelet-hostile-'));
  const dirNode = 'hostile-dir';
  const fileNode = 'hostile-file';
  let dirNodelet: NodeletProcess;
  let fileNodelet: NodeletProcess;
  let reg: TestRegistry;
  let badRegistry: Server;
  let badHost = '';
  let ns: string;

  beforeAll(async () => {
    // A manifest directory with one good pod and three things that must not become pods.
    const dir = join(work, 'manifests');
    mkdirSync(dir);
    copyFileSync(HELLO, join(dir, 'hello.wasm'));
    writeFileSync(join(dir, 'good.yaml'), staticPod('good'));
    writeFileSync(join(dir, 'bad-name.yaml'), staticPod('Bad_Name'));
    execFileSync('mkfifo', [join(dir, 'pipe.yaml')]);
    writeFileSync(join(dir, 'huge.yaml'), staticPod('huge'));
    truncateSync(join(dir, 'huge.yaml'), 50 << 20);
    // A single manifest file as the path; its neighbour must not run.
    const single = join(work, 'single');
    mkdirSync(single);
    copyFileSync(HELLO, join(single, 'hello.wasm'));
    writeFileSync(join(single, 'only.yaml'), staticPod('only'));
    writeFileSync(join(single, 'neighbour.yaml'), staticPod('neighbour'));

    // A registry answering every request with a 2 MB error message, except a repository whose
    // blob body stalls after 4 bytes.
    const mod = tinyModule('stalled');
    const config = Buffer.from('{}');
    const digest = (b: Buffer) => `sha256:${createHash('sha256').update(b).digest('hex')}`;
    const manifest = JSON.stringify({
      schemaVersion: 2,
      mediaType: 'application/vnd.oci.image.manifest.v1+json',
      config: { mediaType: 'application/vnd.wasm.config.v0+json', digest: digest(config), size: config.length },
      layers: [{ mediaType: 'application/wasm', digest: digest(mod), size: mod.length }],
    });
    badRegistry = createServer((req, res) => {
      const url = req.url ?? '';
      if (url.startsWith('/v2/stall/app/manifests/')) return res.writeHead(200, { 'content-type': 'application/vnd.oci.image.manifest.v1+json' }).end(manifest);
      if (url === `/v2/stall/app/blobs/${digest(config)}`) return res.writeHead(200).end(config);
      if (url.startsWith('/v2/stall/app/blobs/')) return void res.writeHead(200, { 'content-length': String(mod.length) }).write(mod.subarray(0, 4));
      res.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify({ errors: [{ code: 'DENIED', message: 'm'.repeat(2 << 20) }] }));
    });
    badHost = await new Promise<string>((r) => badRegistry.listen(0, '127.0.0.1', () => r(`127.0.0.1:${(badRegistry.address() as { port: number }).port}`)));
    reg = await startRegistry();
    [dirNodelet, fileNodelet] = await Promise.all([
      startNodelet(info, dirNode, [`--pod-manifest-path=${dir}`]),
      startNodelet(info, fileNode, [`--pod-manifest-path=${join(single, 'only.yaml')}`, '--image-pull-progress-deadline=2s']),
    ]);
    ns = await podNamespace(k.core, 'hostile');
    await Promise.all([waitNodeReady(k.core, dirNode), waitNodeReady(k.core, fileNode)]);
  });
  afterAll(async () => {
    await Promise.all([dirNodelet?.dispose(), fileNodelet?.dispose()]);
    await reg?.stop();
    badRegistry?.closeAllConnections();
    await new Promise((r) => badRegistry?.close(r));
    rmSync(work, { recursive: true, force: true });
  });

  const mirror = (name: string) => k.core.readNamespacedPod({ name, namespace: 'default' }).catch(() => undefined);

  describe('static pods (20.5)', () => {
    it('runs the good manifest beside a FIFO, a 50 MiB file and an invalid name, and reports each refused one as a Node event', async () => {
      const good = await eventually(
        'good mirror pod Succeeded',
        async () => {
          const p = await mirror(`good-${dirNode}`);
          return p?.status?.phase === 'Succeeded' ? p : undefined;
        },
        90_000,
      );
      expect(good.status?.containerStatuses?.[0]?.state?.terminated?.exitCode).toBe(0);
      const events = await eventually(
        'FailedValidation events',
        async () => {
          const list = await k.core.listNamespacedEvent({ namespace: 'default', fieldSelector: `involvedObject.name=${dirNode},reason=FailedValidation` });
          return list.items.length >= 3 ? list.items : undefined;
        },
        30_000,
      );
      const notes = events.map((e) => e.message ?? '').sort();
      expect(notes).toHaveLength(3);
      expect(notes.find((n) => n.includes('bad-name.yaml'))).toMatch(
        /invalid pod: \[metadata\.name: Invalid value: "Bad_Name-hostile-dir": a lowercase RFC 1123 subdomain/,
      );
      expect(notes.find((n) => n.includes('pipe.yaml'))).toMatch(/pipe\.yaml: not a regular file$/);
      expect(notes.find((n) => n.includes('huge.yaml'))).toMatch(/huge\.yaml: 52428800 bytes exceeds the 10485760 byte limit$/);
      expect(events.every((e) => e.type === 'Warning' && e.involvedObject.kind === 'Node')).toBe(true);
    });

    it('accepts a single manifest file as --pod-manifest-path and runs only that pod', async () => {
      const only = await eventually(
        'only mirror pod Succeeded',
        async () => {
          const p = await mirror(`only-${fileNode}`);
          return p?.status?.phase === 'Succeeded' ? p : undefined;
        },
        90_000,
      );
      expect(only.metadata?.ownerReferences?.[0]).toMatchObject({ kind: 'Node', name: fileNode });
      expect(await mirror(`neighbour-${fileNode}`)).toBeUndefined();
    });
  });

  const waiting = (p: V1Pod) => p.status?.containerStatuses?.[0]?.state?.waiting;
  const pullFailed = async (name: string, image: string) => {
    await k.core.createNamespacedPod({
      namespace: ns,
      body: {
        metadata: { name },
        spec: { tolerations: [WASM_TOLERATION], nodeSelector: { 'kubernetes.io/hostname': fileNode }, containers: [{ name: 'main', image }] },
      },
    });
    // ErrImagePull after each attempt, ImagePullBackOff between attempts; both carry the pull error.
    return eventually(
      `${name} ErrImagePull`,
      async () => {
        const p = await k.core.readNamespacedPod({ name, namespace: ns });
        return ['ErrImagePull', 'ImagePullBackOff'].includes(waiting(p)?.reason ?? '') ? p : undefined;
      },
      90_000,
    );
  };

  describe('registries (20.3, 21.3)', () => {
    it('a registry error with a 2 MB message gives the pod a short, precise pull error', async () => {
      const pod = await pullFailed('big-error', `${badHost}/app:v1`);
      expect(waiting(pod)!.message).toContain(`failed to pull image "${badHost}/app:v1": unexpected status 400 Bad Request (GET manifests/v1: HTTP 400)`);
      expect(waiting(pod)!.message!.length).toBeLessThan(1024);
    });

    it('a blob body that stalls fails the pull after --image-pull-progress-deadline without progress', async () => {
      const pod = await pullFailed('stalled-blob', `${badHost}/stall/app:v1`);
      expect(waiting(pod)!.message).toMatch(new RegExp(`no progress reading ${badHost.replace(/\./g, '\\.')}/v2/stall/app/blobs/sha256:[0-9a-f]{64} for 2s`));
    });

    it('compat layers with a bad checksum or a base-256 size end in ErrImagePull naming the problem', async () => {
      await pushRawCompatImage(
        reg.host,
        'hostile/tar',
        'checksum',
        Buffer.concat([rawTarEntry('app.wasm', tinyModule(), { badChecksum: true }), Buffer.alloc(4 << 20, 0x5a)]),
      );
      await pushRawCompatImage(reg.host, 'hostile/tar', 'b256', rawTarEntry('app.wasm', Buffer.alloc(4 << 20), { base256: 1n << 72n }), { gzip: true });
      const bad = await pullFailed('bad-checksum', `${reg.host}/hostile/tar:checksum`);
      expect(waiting(bad)!.message).toContain('layer is not a tar archive (bad header checksum)');
      const b256 = await pullFailed('base-256', `${reg.host}/hostile/tar:b256`);
      expect(waiting(b256)!.message).toContain('tar entry "app.wasm" declares an invalid size');
    });
  });

  describe('device plugin health flapping (20.4)', () => {
    it('100 devices flipping every 10 ms: a bounded number of Node writes and the right final allocatable', async () => {
      const R = 'example.com/flap';
      const sock = join(fileNodelet.rootDir, 'device-plugins', 'flap.sock');
      const devices = (healthy: boolean): FakeDevice[] =>
        Array.from({ length: 100 }, (_, i) => ({ ID: `flap-${i}`, health: healthy ? 'Healthy' : 'Unhealthy' }));
      const plugin = new FakeDevicePlugin(sock, { devices: devices(true) });
      await plugin.start();
      const node = () => k.core.readNode({ name: fileNode });
      const res = (n: V1Node) => [n.status?.capacity?.[R], n.status?.allocatable?.[R]];
      try {
        expect(await registerWithKubelet(join(fileNodelet.rootDir, 'device-plugins', 'kubelet.sock'), { endpoint: 'flap.sock', resource_name: R })).toBe('');
        await eventually('100 devices in capacity', async () => (res(await node())[1] === '100' ? true : undefined), 60_000, 100);
        // Count every write of the Node object (MODIFIED events of a watch on it), and those
        // that changed the flapping resource (other components write the Node too).
        let writes = 0;
        let deviceWrites = 0;
        let seen = '100';
        const watch = await new k8s.Watch(k.kc).watch(
          '/api/v1/nodes',
          { fieldSelector: `metadata.name=${fileNode}` },
          (type, obj: V1Node) => {
            if (type !== 'MODIFIED') return;
            writes++;
            const now = obj.status?.allocatable?.[R] ?? '';
            if (now !== seen) deviceWrites++;
            seen = now;
          },
          () => undefined,
        );
        const started = Date.now();
        let flips = 0;
        await new Promise<void>((done) => {
          const t = setInterval(() => {
            plugin.update(devices(flips % 2 === 1));
            if (++flips === 500) {
              clearInterval(t);
              done();
            }
          }, 10);
        });
        const last = devices(true);
        for (let i = 0; i < 7; i++) last[i]!.health = 'Unhealthy';
        plugin.update(last);
        await eventually('final allocatable 93', async () => (res(await node())[1] === '93' ? true : undefined), 60_000, 100);
        const seconds = Math.ceil((Date.now() - started) / 1000);
        watch.abort();
        console.log(`device flapping: ${flips} updates of 100 devices, ${writes} Node writes (${deviceWrites} changing ${R}) in ${seconds}s`);
        expect(res(await node())).toEqual(['100', '93']);
        // At most one rate-limited write per second of flapping (the first one at once), plus the periodic status update.
        expect(deviceWrites).toBeGreaterThan(0);
        expect(deviceWrites).toBeLessThanOrEqual(seconds + 2);
        expect(writes).toBeLessThanOrEqual(2 * seconds + 4);
      } finally {
        plugin.stop();
      }
    });
  });
});
