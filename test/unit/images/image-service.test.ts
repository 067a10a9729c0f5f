// OciImageService against a real docker-registry started by the harness.
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isImagePull, isProviderError, type ImageRequest } from '@nodelet/plugin-api/v1';
import { isNodeletError } from '../../../core/errors/catalogue.ts';
import { OciImageService } from '../../../core/images/image-service.ts';
import { WASM_LAYER_TYPES } from '../../../core/images/manifest.ts';
import { registryTransport, type RegistryTransport } from '../../../core/images/registry-transport.ts';
import { startRegistry, type TestRegistry } from '../../harness/registry.ts';
import { freePort } from '../../harness/ports.ts';
import { pushImage, pushIndex, pushWasmArtifact, sha256, tinyModule } from '../../harness/oci-push.ts';

let reg: TestRegistry;
const roots: string[] = [];

beforeAll(async () => {
  reg = await startRegistry();
});
afterAll(async () => {
  await reg?.stop();
  await Promise.all(roots.map((r) => rm(r, { recursive: true, force: true })));
});

async function newService(transport?: RegistryTransport): Promise<{ svc: OciImageService; root: string }> {
  const root = await mkdtemp(join(tmpdir(), 'nodelet-images-'));
  roots.push(root);
  return { svc: await OciImageService.open({ rootDir: root, transport }), root };
}

const req = (over: Partial<ImageRequest> = {}): ImageRequest => ({
  pullPolicy: 'IfNotPresent',
  credentials: [],
  acceptLayerTypes: WASM_LAYER_TYPES,
  ...over,
});

async function pullError(p: Promise<unknown>): Promise<Error & { code: string; reason: string; cause?: unknown }> {
  const e = await p.then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(isProviderError(e)).toBe(true);
  return e as Error & { code: string; reason: string };
}

describe('pulling Wasm artifacts', () => {
  it('pulls a CNCF artifact by tag and stores the module under its digest', async () => {
    const mod = tinyModule('cncf-by-tag');
    const pushed = await pushWasmArtifact(reg.host, 'hello', 'v1', mod, { format: 'cncf' });
    const { svc, root } = await newService();
    const img = await svc.pull(`${reg.host}/hello:v1`, req());
    expect(img.imageID).toBe(`${reg.host}/hello@${pushed.digest}`);
    expect(img.digest).toBe(pushed.digest);
    expect(img.path).toBe(join(root, 'images', 'blobs', 'sha256', sha256(mod).slice(7)));
    expect(await readFile(img.path)).toEqual(mod);
    expect(img.size).toBe(mod.length);
    expect(img.cached).toBe(false);
  });

  it('pulls a wasm-to-oci artifact by digest', async () => {
    const mod = tinyModule('wasm-to-oci');
    const pushed = await pushWasmArtifact(reg.host, 'krustlet/hello', 'v1', mod, { format: 'wasm-to-oci' });
    const { svc } = await newService();
    const img = await svc.pull(`${reg.host}/krustlet/hello@${pushed.digest}`, req());
    expect(img.imageID).toBe(`${reg.host}/krustlet/hello@${pushed.digest}`);
    expect(await readFile(img.path)).toEqual(mod);
  });

  it('picks the wasip1/wasm entry of an image index', async () => {
    const wasm = await pushWasmArtifact(reg.host, 'multi', 'wasm-only', tinyModule('index-wasm'));
    const linux = await pushImage(reg.host, 'multi', 'linux-only', { mediaType: 'application/vnd.oci.image.config.v1+json', bytes: Buffer.from('{}') }, [
      { mediaType: 'application/vnd.oci.image.layer.v1.tar+gzip', bytes: Buffer.from('not really a tarball') },
    ]);
    const index = await pushIndex(reg.host, 'multi', 'v1', [
      { digest: linux.digest, size: linux.manifest.length, os: 'linux', architecture: 'amd64' },
      { digest: wasm.digest, size: wasm.manifest.length, os: 'wasip1', architecture: 'wasm' },
    ]);
    const { svc } = await newService();
    const img = await svc.pull(`${reg.host}/multi:v1`, req());
    expect(img.digest).toBe(index.digest);
    expect(img.imageID).toBe(`${reg.host}/multi@${index.digest}`);
    expect(await readFile(img.path)).toEqual(tinyModule('index-wasm'));
  });

  it('picks the wasip2/wasm entry (a component) of an image index', async () => {
    const comp = await pushWasmArtifact(reg.host, 'multi2', 'comp', tinyModule('index-component'));
    const linux = await pushImage(reg.host, 'multi2', 'linux-only', { mediaType: 'application/vnd.oci.image.config.v1+json', bytes: Buffer.from('{}') }, [
      { mediaType: 'application/vnd.oci.image.layer.v1.tar+gzip', bytes: Buffer.from('not really a tarball') },
    ]);
    await pushIndex(reg.host, 'multi2', 'v1', [
      { digest: linux.digest, size: linux.manifest.length, os: 'linux', architecture: 'amd64' },
      { digest: comp.digest, size: comp.manifest.length, os: 'wasip2', architecture: 'wasm' },
    ]);
    const { svc } = await newService();
    const img = await svc.pull(`${reg.host}/multi2:v1`, req());
    expect(await readFile(img.path)).toEqual(tinyModule('index-component'));
  });

  it('fails on an index without a wasm platform, naming the platforms found', async () => {
    const linux = await pushImage(reg.host, 'linuxonly', 'x', { mediaType: 'application/vnd.oci.image.config.v1+json', bytes: Buffer.from('{"a":1}') }, [
      { mediaType: 'application/vnd.oci.image.layer.v1.tar', bytes: Buffer.from('tar') },
    ]);
    await pushIndex(reg.host, 'linuxonly', 'v1', [
      { digest: linux.digest, size: linux.manifest.length, os: 'linux', architecture: 'amd64' },
      { digest: linux.digest, size: linux.manifest.length, os: 'linux', architecture: 'arm64' },
    ]);
    const { svc } = await newService();
    const err = await pullError(svc.pull(`${reg.host}/linuxonly:v1`, req()));
    expect(err.reason).toBe('ErrImagePull');
    expect(err.message).toContain(`failed to pull image "${reg.host}/linuxonly:v1"`);
    expect(err.message).toContain('found linux/amd64, linux/arm64');
  });

  it('fails on a container image, naming the media types found', async () => {
    await pushImage(
      reg.host,
      'container',
      'v1',
      { mediaType: 'application/vnd.docker.container.image.v1+json', bytes: Buffer.from('{"b":2}') },
      [{ mediaType: 'application/vnd.docker.image.rootfs.diff.tar.gzip', bytes: Buffer.from('gz') }],
      { manifestMediaType: 'application/vnd.docker.distribution.manifest.v2+json' },
    );
    const { svc } = await newService();
    const err = await pullError(svc.pull(`${reg.host}/container:v1`, req()));
    expect(isImagePull(err)).toBe(true);
    expect(err.reason).toBe('ErrImagePull');
    expect(err.message).toContain('unsupported image format: media types found:');
    expect(err.message).toContain('application/vnd.docker.distribution.manifest.v2+json');
    expect(err.message).toContain('application/vnd.docker.container.image.v1+json');
    expect(err.message).toContain('application/vnd.docker.image.rootfs.diff.tar.gzip');
    expect(isNodeletError(err.cause, 'NDL_IMAGE_FORMAT')).toBe(true);
  });

  it("reports the registry's reason for an unknown tag", async () => {
    const { svc } = await newService();
    const err = await pullError(svc.pull(`${reg.host}/hello:nope`, req()));
    expect(err.message).toMatch(new RegExp(`^failed to pull image "${reg.host}/hello:nope": manifest unknown`));
    expect(err.message).toContain('HTTP 404');
  });

  it('reports an unreachable registry', async () => {
    const { svc } = await newService();
    const port = await freePort(); // nothing listens there any more
    const err = await pullError(svc.pull(`127.0.0.1:${port}/hello:v1`, req()));
    expect(err.reason).toBe('ErrImagePull');
    expect(err.message).toContain('ECONNREFUSED');
  });

  it('answers an invalid name with InvalidImageName', async () => {
    const { svc } = await newService();
    const err = await pullError(svc.pull('Bad//Name', req()));
    expect(err.reason).toBe('InvalidImageName');
    expect(isNodeletError(err.cause, 'NDL_IMAGE_REFERENCE')).toBe(true);
  });
});

describe('integrity', () => {
  it('rejects a blob whose content does not match its digest and keeps nothing', async () => {
    const mod = tinyModule('tamper-me');
    const pushed = await pushWasmArtifact(reg.host, 'tampered', 'v1', mod);
    const layer = pushed.layers[0]!;
    const forged = Buffer.from(mod);
    forged[forged.length - 1] ^= 0xff;
    await writeFile(reg.blobDataPath(layer.digest), forged);
    const { svc, root } = await newService();
    const err = await pullError(svc.pull(`${reg.host}/tampered:v1`, req()));
    expect(err.reason).toBe('ErrImagePull');
    expect(isNodeletError(err.cause, 'NDL_IMAGE_DIGEST')).toBe(true);
    expect(err.message).toContain(`received content has digest ${sha256(forged)}`);
    expect(await readdir(join(root, 'images', 'blobs', 'sha256'))).toEqual([]);
    expect(await readdir(join(root, 'images', 'tmp'))).toEqual([]);
    expect(svc.list()).toEqual([]);
  });
});

describe('pull policies and caching', () => {
  it('IfNotPresent answers the second pull without any request', async () => {
    await pushWasmArtifact(reg.host, 'cached', 'v1', tinyModule('cached'));
    let calls = 0;
    const base = registryTransport({ headersTimeoutMs: 30_000, noProgressTimeoutMs: 30_000 });
    const { svc } = await newService((...a) => (calls++, base(...a)));
    const first = await svc.pull(`${reg.host}/cached:v1`, req());
    const before = (await reg.requests()).length;
    const callsBefore = calls;
    const second = await svc.pull(`${reg.host}/cached:v1`, req());
    expect((await reg.requests()).length).toBe(before);
    expect(calls).toBe(callsBefore);
    expect(second).toEqual({ ...first, cached: true });
  });

  it('a restarted service finds the image in the index on disk', async () => {
    await pushWasmArtifact(reg.host, 'persisted', 'v1', tinyModule('persisted'));
    const { svc, root } = await newService();
    const first = await svc.pull(`${reg.host}/persisted:v1`, req());
    const reopened = await OciImageService.open({ rootDir: root, transport: () => Promise.reject(new Error('no network expected')) });
    expect(await reopened.pull(`${reg.host}/persisted:v1`, req({ pullPolicy: 'Never' }))).toEqual({ ...first, cached: true });
  });

  it('Never fails with ErrImageNeverPull when the image is absent', async () => {
    const { svc } = await newService();
    const err = await pullError(svc.pull(`${reg.host}/cached:v1`, req({ pullPolicy: 'Never' })));
    expect(err.reason).toBe('ErrImageNeverPull');
    expect(err.message).toBe(`Container image "${reg.host}/cached:v1" is not present with pull policy of Never`);
    expect(isNodeletError(err.cause, 'NDL_IMAGE_NEVER_PULL')).toBe(true);
  });

  it('Always re-resolves the tag and follows it to new content, reusing present blobs', async () => {
    await pushWasmArtifact(reg.host, 'moving', 'v1', tinyModule('first'));
    const { svc } = await newService();
    const a = await svc.pull(`${reg.host}/moving:v1`, req({ pullPolicy: 'Always' }));
    const again = await svc.pull(`${reg.host}/moving:v1`, req({ pullPolicy: 'Always' }));
    expect(again).toEqual({ ...a, cached: true });
    const blobGetsBefore = await reg.blobGets('moving');
    const moved = await pushWasmArtifact(reg.host, 'moving', 'v1', tinyModule('second'));
    const b = await svc.pull(`${reg.host}/moving:v1`, req({ pullPolicy: 'Always' }));
    expect(b.digest).toBe(moved.digest);
    expect(b.cached).toBe(false);
    expect(await readFile(b.path)).toEqual(tinyModule('second'));
    expect(await reg.blobGets('moving')).toBe(blobGetsBefore + 1);
  });

  it('Always with a pinned digest that is present makes no request', async () => {
    const pushed = await pushWasmArtifact(reg.host, 'pinned', 'v1', tinyModule('pinned'));
    const { svc } = await newService();
    const image = `${reg.host}/pinned@${pushed.digest}`;
    await svc.pull(image, req({ pullPolicy: 'Always' }));
    const before = (await reg.requests()).length;
    expect((await svc.pull(image, req({ pullPolicy: 'Always' }))).cached).toBe(true);
    expect((await reg.requests()).length).toBe(before);
  });

  it('ten concurrent pulls of one image make one blob GET', async () => {
    await pushWasmArtifact(reg.host, 'concurrent', 'v1', tinyModule('concurrent'));
    const { svc } = await newService();
    const pulls = await Promise.all(Array.from({ length: 10 }, () => svc.pull(`${reg.host}/concurrent:v1`, req())));
    expect(new Set(pulls.map((p) => p.path)).size).toBe(1);
    expect(await reg.blobGets('concurrent')).toBe(1);
  });

  it('an aborted pull rejects with the abort but does not cancel a shared download', async () => {
    await pushWasmArtifact(reg.host, 'abort', 'v1', tinyModule('abort'));
    const { svc } = await newService();
    const ctl = new AbortController();
    const aborted = svc.pull(`${reg.host}/abort:v1`, req({ signal: ctl.signal }));
    const kept = svc.pull(`${reg.host}/abort:v1`, req());
    ctl.abort();
    const err = await pullError(aborted);
    expect(err.message).toContain('aborted');
    expect((await kept).imageID).toContain(`${reg.host}/abort@sha256:`);
  });

  it('lists pulled images with their names and sizes', async () => {
    const mod = tinyModule('listed');
    const pushed = await pushWasmArtifact(reg.host, 'listed', 'v1', mod);
    const { svc } = await newService();
    await svc.pull(`${reg.host}/listed:v1`, req());
    expect(svc.list()).toEqual([{ names: [`${reg.host}/listed@${pushed.digest}`, `${reg.host}/listed:v1`], sizeBytes: mod.length }]);
  });
});
