// Image volumes in the image service, pulled from a real docker-registry: plain OCI images
// (tar, tar+gzip, tar+zstd layers, whiteouts) and artifacts unpacked into one read-only tree
// per digest, pull policies, escapes and tampered layers refused, trees held against image GC.
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync, zstdCompressSync } from 'node:zlib';
import { pack } from 'tar-stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isProviderError } from '@nodelet/plugin-api/v1';
import { OciImageService } from '../../../core/images/image-service.ts';
import { defaultPullPolicy, type ImageVolumeRequest } from '../../../core/images/volume-pull.ts';
import { makeTar, OCI_IMAGE_CONFIG, OCI_LAYER_TAR, OCI_LAYER_TAR_GZIP } from '../../harness/compat-image.ts';
import { pushImage, pushIndex, pushManifest, pushBlob, OCI_MANIFEST } from '../../harness/oci-push.ts';
import { startRegistry, type TestRegistry } from '../../harness/registry.ts';

let reg: TestRegistry;
const roots: string[] = [];
beforeAll(async () => {
  reg = await startRegistry();
});
afterAll(async () => {
  await reg?.stop();
  for (const r of roots) {
    execFileSync('chmod', ['-R', 'u+w', r]);
    await rm(r, { recursive: true, force: true });
  }
});

async function service(): Promise<{ svc: OciImageService; root: string }> {
  const root = await mkdtemp(join(tmpdir(), 'nodelet-imgvol-'));
  roots.push(root);
  return { svc: await OciImageService.open({ rootDir: root }), root };
}
const req = (extra: Partial<ImageVolumeRequest> = {}): ImageVolumeRequest => ({ pullPolicy: 'IfNotPresent', credentials: [], ...extra });
const config = { mediaType: OCI_IMAGE_CONFIG, bytes: Buffer.from('{"architecture":"amd64","os":"linux","rootfs":{"type":"layers","diff_ids":[]}}') };
const failure = async (p: Promise<unknown>) => {
  const e = await p.then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(isProviderError(e)).toBe(true);
  return e as Error & { reason: string };
};

/** A tar of raw entries (names GNU tar will not write). */
async function rawTar(entries: { name: string; body?: string; type?: 'file' | 'symlink'; linkname?: string }[]): Promise<Buffer> {
  const p = pack();
  const chunks: Buffer[] = [];
  const done = (async () => {
    for await (const c of p) chunks.push(c as Buffer);
  })();
  for (const { body, ...h } of entries) await new Promise<void>((res, rej) => p.entry({ type: 'file', ...h }, body ?? '', (e) => (e ? rej(e) : res())));
  p.finalize();
  await done;
  return Buffer.concat(chunks);
}

describe('image volumes', () => {
  it('unpacks a plain OCI image: layers in order, whiteouts honoured, one read-only tree shared by its users', async () => {
    const lower = makeTar({ 'data.json': '{"file":"kitten.jpg"}', 'etc/os-release': 'NAME=lower', 'tmp/junk': 'junk' });
    const upper = await rawTar([
      { name: 'etc/os-release', body: 'NAME="Alpine Linux"' },
      { name: 'tmp/.wh.junk', body: '' },
      { name: 'bin/sh', type: 'symlink', linkname: '/bin/busybox' },
    ]);
    const zstd = makeTar({ 'z/zstd.txt': 'compressed with zstd' });
    const pushed = await pushImage(reg.host, 'vol/plain', 'v1', config, [
      { mediaType: OCI_LAYER_TAR_GZIP, bytes: gzipSync(lower) },
      { mediaType: OCI_LAYER_TAR, bytes: upper },
      { mediaType: 'application/vnd.oci.image.layer.v1.tar+zstd', bytes: zstdCompressSync(zstd) },
    ]);
    const { svc, root } = await service();
    const image = `${reg.host}/vol/plain:v1`;
    const a = await svc.pullVolume(image, req({ holder: 'pod-a/vol' }));
    expect(a).toMatchObject({ image, imageID: `${reg.host}/vol/plain@${pushed.digest}`, digest: pushed.digest, cached: false });
    expect(a.path).toBe(join(root, 'images', 'trees', 'sha256', pushed.digest.slice(7)));
    expect(readFileSync(join(a.path, 'data.json'), 'utf8')).toContain('kitten.jpg');
    expect(readFileSync(join(a.path, 'etc/os-release'), 'utf8')).toBe('NAME="Alpine Linux"');
    expect(readFileSync(join(a.path, 'z/zstd.txt'), 'utf8')).toBe('compressed with zstd');
    expect(existsSync(join(a.path, 'tmp/junk'))).toBe(false);
    expect(statSync(a.path).mode & 0o777).toBe(0o555);
    expect(statSync(join(a.path, 'data.json')).mode & 0o777).toBe(0o444);
    expect(a.size).toBe('{"file":"kitten.jpg"}'.length + 'NAME="Alpine Linux"'.length + 'compressed with zstd'.length);
    // A second pod: the same tree, from memory, without a blob download.
    const gets = await reg.blobGets('vol/plain');
    const b = await svc.pullVolume(image, req({ holder: 'pod-b/vol' }));
    expect(b).toMatchObject({ path: a.path, cached: true });
    expect(await reg.blobGets('vol/plain')).toBe(gets);
    expect(svc.list()).toContainEqual({ names: [`${reg.host}/vol/plain@${pushed.digest}`, image], sizeBytes: a.size });
    // A store opened again (nodelet restarted) knows the tree.
    const again = await OciImageService.open({ rootDir: root });
    expect(await again.pullVolume(image, req({ pullPolicy: 'Never' }))).toMatchObject({ path: a.path, cached: true });
  });

  it('mounts an artifact: each layer one file named by its title annotation (else its digest)', async () => {
    const host = reg.host;
    const empty = await pushBlob(host, 'vol/artifact', { mediaType: 'application/vnd.oci.empty.v1+json', bytes: Buffer.from('{}') });
    const plugin = await pushBlob(host, 'vol/artifact', { mediaType: 'application/wasm', bytes: Buffer.from('\0asm plugin') });
    const data = await pushBlob(host, 'vol/artifact', { mediaType: 'text/plain', bytes: Buffer.from('plain data') });
    const { digest } = await pushManifest(
      host,
      'vol/artifact',
      'v1',
      {
        schemaVersion: 2,
        mediaType: OCI_MANIFEST,
        artifactType: 'application/vnd.example.plugins',
        config: empty,
        layers: [{ ...plugin, annotations: { 'org.opencontainers.image.title': 'plugins/filter.wasm' } }, data],
      },
      OCI_MANIFEST,
    );
    const { svc } = await service();
    const v = await svc.pullVolume(`${host}/vol/artifact:v1`, req());
    expect(v.digest).toBe(digest);
    expect(readFileSync(join(v.path, 'plugins/filter.wasm'), 'utf8')).toBe('\0asm plugin');
    expect(readFileSync(join(v.path, `sha256-${data.digest.slice(7)}`), 'utf8')).toBe('plain data');
  });

  it('picks the entry of an index for this node', async () => {
    const amd = await pushImage(reg.host, 'vol/multi', 'amd64', config, [{ mediaType: OCI_LAYER_TAR, bytes: makeTar({ 'arch.txt': 'amd64' }) }]);
    const arm = await pushImage(reg.host, 'vol/multi', 'arm64', config, [{ mediaType: OCI_LAYER_TAR, bytes: makeTar({ 'arch.txt': 'arm64' }) }]);
    const index = await pushIndex(reg.host, 'vol/multi', 'v1', [
      { digest: amd.digest, size: amd.manifest.length, os: 'linux', architecture: 'amd64' },
      { digest: arm.digest, size: arm.manifest.length, os: 'linux', architecture: 'arm64' },
    ]);
    const { svc } = await service();
    const v = await svc.pullVolume(`${reg.host}/vol/multi:v1`, req());
    expect(v.imageID).toBe(`${reg.host}/vol/multi@${index.digest}`);
    expect(readFileSync(join(v.path, 'arch.txt'), 'utf8')).toBe(process.arch === 'arm64' ? 'arm64' : 'amd64');
  });

  it('refuses a layer that climbs out of the volume, leaving nothing behind', async () => {
    const evil = await rawTar([
      { name: 'fine.txt', body: 'ok' },
      { name: '../../escaped.txt', body: 'pwned' },
    ]);
    const pushed = await pushImage(reg.host, 'vol/escape', 'v1', config, [{ mediaType: OCI_LAYER_TAR, bytes: evil }]);
    const { svc, root } = await service();
    const e = await failure(svc.pullVolume(`${reg.host}/vol/escape:v1`, req()));
    expect(e.reason).toBe('ErrImagePull');
    expect(e.message).toBe(
      `failed to pull image "${reg.host}/vol/escape:v1": path escapes its root: tar entry "../../escaped.txt" of layer ${pushed.layers[0]!.digest} climbs out of the volume root with ".."`,
    );
    const trees = join(root, 'images', 'trees');
    expect(readdirSync(join(trees, 'sha256'))).toEqual([]);
    expect(readdirSync(join(trees, 'tmp')).filter((n) => !n.startsWith('index.'))).toEqual([]);
    expect(existsSync(join(trees, 'escaped.txt'))).toBe(false);
    expect(existsSync(join(root, 'escaped.txt'))).toBe(false);
  });

  it('refuses a tampered layer by its digest, and a layer type it cannot unpack by name', async () => {
    const pushed = await pushImage(reg.host, 'vol/tampered', 'v1', config, [{ mediaType: OCI_LAYER_TAR_GZIP, bytes: gzipSync(makeTar({ a: 'a' })) }]);
    const layer = pushed.layers[0]!;
    const evil = Buffer.from(gzipSync(makeTar({ a: 'b' })));
    await writeFile(
      reg.blobDataPath(layer.digest),
      evil.length === layer.size ? evil : Buffer.concat([evil, Buffer.alloc(layer.size)]).subarray(0, layer.size),
    );
    const { svc } = await service();
    const e = await failure(svc.pullVolume(`${reg.host}/vol/tampered:v1`, req()));
    expect(e.message).toContain(`blob ${layer.digest}: received content has digest sha256:`);
    await pushImage(reg.host, 'vol/wasm-layer', 'v1', config, [{ mediaType: 'application/wasm', bytes: Buffer.from('\0asm') }]);
    const bad = await failure(svc.pullVolume(`${reg.host}/vol/wasm-layer:v1`, req()));
    expect(bad.message).toContain('an image volume unpacks tar layers');
    expect(bad.message).toContain('this image has layers of type application/wasm');
  });

  it('follows the pull policy: Never needs the tree, Always asks the registry, names default as upstream', async () => {
    await pushImage(reg.host, 'vol/policy', 'v1', config, [{ mediaType: OCI_LAYER_TAR, bytes: makeTar({ v: '1' }) }]);
    const { svc } = await service();
    const image = `${reg.host}/vol/policy:v1`;
    const never = await failure(svc.pullVolume(image, req({ pullPolicy: 'Never' })));
    expect(never.reason).toBe('ErrImageNeverPull');
    expect(never.message).toBe(`Container image "${image}" is not present with pull policy of Never`);
    const first = await svc.pullVolume(image, req());
    await pushImage(reg.host, 'vol/policy', 'v1', config, [{ mediaType: OCI_LAYER_TAR, bytes: makeTar({ v: '2' }) }]);
    expect((await svc.pullVolume(image, req())).path).toBe(first.path);
    const always = await svc.pullVolume(image, req({ pullPolicy: 'Always' }));
    expect(always.path).not.toBe(first.path);
    expect(readFileSync(join(always.path, 'v'), 'utf8')).toBe('2');
    expect(defaultPullPolicy('registry.example/data')).toBe('Always');
    expect(defaultPullPolicy('registry.example/data:latest')).toBe('Always');
    expect(defaultPullPolicy('localhost:5000/data:v1')).toBe('IfNotPresent');
    expect(defaultPullPolicy(`registry.example/data@sha256:${'a'.repeat(64)}`)).toBe('IfNotPresent');
    const invalid = await failure(svc.pullVolume('Not A Reference', req()));
    expect(invalid.reason).toBe('InvalidImageName');
  });

  it('never collects a tree a pod holds; collects it once released and old enough', async () => {
    await pushImage(reg.host, 'vol/gc', 'v1', config, [{ mediaType: OCI_LAYER_TAR, bytes: makeTar({ big: 'x'.repeat(5000) }) }]);
    const { svc } = await service();
    const v = await svc.pullVolume(`${reg.host}/vol/gc:v1`, req({ holder: 'pod-1/data' }));
    const full = async () => ({ capacityBytes: 10_000, availableBytes: 10_000 - svc.list().reduce((n, i) => n + i.sizeBytes, 0) - 4_000 });
    const policy = { highThresholdPercent: 50, lowThresholdPercent: 10, minAgeMs: 0 };
    const later = Date.now() + 3_600_000;
    const held = await svc.garbageCollect(policy, [], full, later);
    expect(held.removed).toEqual([]);
    expect(existsSync(v.path)).toBe(true);
    svc.releaseVolumes('pod-1/data');
    // Still named by a pod's spec: kept.
    expect((await svc.garbageCollect(policy, [`${reg.host}/vol/gc:v1`], full, later)).removed).toEqual([]);
    const r = await svc.garbageCollect(policy, [], full, later + 1);
    expect(r.removed).toEqual([`tree:${v.digest}`]);
    expect(r.freedBytes).toBe(5000);
    expect(existsSync(v.path)).toBe(false);
    expect(svc.list()).toEqual([]);
  });
});
