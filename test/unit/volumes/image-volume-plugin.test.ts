// The `image` volume plugin with a small fake image service: pull policy defaulting, pull
// secrets, events on the pod, a failed pull prepared as unavailable (ErrImagePull, then
// ImagePullBackOff until the back-off ends), holds released at tear-down; and the mounts of
// such a volume (unavailable: the pull's reason; subPath never created, missing: CreateContainerError).
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { V1Volume } from '@kubernetes/client-node';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isProviderError, providerError } from '../../../plugin-api/v1/index.ts';
import type { ImageVolumeRequest, ImageVolumeService, PulledImageVolume } from '../../../core/images/volume-pull.ts';
import { resolveMounts } from '../../../core/pods/mounts.ts';
import { prepareVolumes, teardownVolumes, VolumePluginRegistry } from '../../../core/volumes/index.ts';
import { imageVolumePlugin } from '../../../core/volumes/plugins/image.ts';
import { FakeObjectSource, memoryLogger, pod, tempDir } from './fakes.ts';

/** Pulls that answer from `content` (reference → dir), else fail as a registry would. */
class FakeImages implements ImageVolumeService {
  readonly calls: { image: string; req: ImageVolumeRequest }[] = [];
  readonly released: string[] = [];
  readonly content = new Map<string, string>();
  async pullVolume(image: string, req: ImageVolumeRequest): Promise<PulledImageVolume> {
    this.calls.push({ image, req });
    const dir = this.content.get(image);
    if (!dir) throw providerError('ImagePull', `failed to pull image "${image}": manifest unknown`, { reason: 'ErrImagePull' });
    return { image, imageID: `${image}@sha256:${'1'.repeat(64)}`, digest: `sha256:${'1'.repeat(64)}`, path: dir, size: 4, cached: this.calls.length > 1 };
  }
  releaseVolumes(holder: string): void {
    this.released.push(holder);
  }
}

let dir: string;
let cleanup: () => Promise<void>;
let images: FakeImages;
let events: string[];
let now: number;
let registry: VolumePluginRegistry;
const source = new FakeObjectSource();

beforeEach(async () => {
  ({ dir, cleanup } = await tempDir());
  images = new FakeImages();
  events = [];
  now = 1_000_000;
  const content = path.join(dir, 'tree');
  await mkdir(path.join(content, 'etc'), { recursive: true });
  await writeFile(path.join(content, 'etc', 'passwd'), 'root:x:0:0');
  images.content.set('registry.test/data:v1', content);
  registry = new VolumePluginRegistry([
    imageVolumePlugin({ images, events: { emit: (r, type, reason, note) => events.push(`${r.name} ${type} ${reason}: ${note}`) }, now: () => now }),
  ]);
});
afterEach(() => cleanup());

const podDir = () => path.join(dir, 'pods', 'uid-1234');
const volume = (reference: string, pullPolicy?: string): V1Volume => ({ name: 'data', image: { reference, pullPolicy } });
const prepare = (volumes: V1Volume[], spec: Parameters<typeof pod>[0] = {}) =>
  prepareVolumes(pod({ volumes, ...spec }), { podDir: podDir(), source, nodeName: 'n', hostIP: '10.0.0.1', log: memoryLogger(), plugins: registry });

describe('the image volume plugin', () => {
  it('pulls with the default policy and the pod secrets, and mounts the shared tree read-only', async () => {
    const auths = { auths: { 'registry.test': { username: 'u', password: 'p' } } };
    source.secrets.set('ns1/regcred', {
      metadata: { name: 'regcred', namespace: 'ns1' },
      type: 'kubernetes.io/dockerconfigjson',
      data: { '.dockerconfigjson': Buffer.from(JSON.stringify(auths)).toString('base64') },
    });
    const got = await prepare([volume('registry.test/data:v1')], { imagePullSecrets: [{ name: 'regcred' }] });
    const v = got.get('data')!;
    expect(v).toEqual({ name: 'data', hostPath: images.content.get('registry.test/data:v1'), readOnly: true, kind: 'image' });
    expect(images.calls[0]!.req).toMatchObject({ pullPolicy: 'IfNotPresent', holder: 'uid-1234/data' });
    expect(images.calls[0]!.req.credentials).toEqual([{ registry: 'registry.test', username: 'u', password: 'p', token: undefined }]);
    expect(events).toEqual([
      'web Normal Pulling: Pulling image "registry.test/data:v1"',
      expect.stringMatching(/^web Normal Pulled: Successfully pulled image "registry\.test\/data:v1" in \d+\.\d{3}s\. Image size: 4 bytes\.$/),
    ]);
    // A re-sync pulls again (the policy decides) but reports nothing new.
    await prepare([volume('registry.test/data:v1')]);
    expect(images.calls).toHaveLength(2);
    expect(events).toHaveLength(2);
    await prepare([{ name: 'data', image: { reference: 'registry.test/data' } }]).catch(() => undefined);
    expect(images.calls[2]!.req.pullPolicy).toBe('Always');
    expect((await prepare([volume('registry.test/data:v1', 'Never')])).get('data')!.unavailable).toBeUndefined();
    expect(images.calls[3]!.req.pullPolicy).toBe('Never');
  });

  it('prepares a failed pull as unavailable: ErrImagePull, then ImagePullBackOff until the back-off ends', async () => {
    const image = 'registry.test/missing:v1';
    const first = (await prepare([volume(image)])).get('data')!;
    expect(first.unavailable).toEqual({ reason: 'ErrImagePull', message: `failed to pull image "${image}": manifest unknown`, retryAt: now });
    expect(events).toEqual([
      `web Normal Pulling: Pulling image "${image}"`,
      `web Warning Failed: Failed to pull image "${image}": failed to pull image "${image}": manifest unknown`,
    ]);
    now += 1000;
    const backoff = (await prepare([volume(image)])).get('data')!;
    expect(backoff.unavailable).toEqual({
      reason: 'ImagePullBackOff',
      message: `Back-off pulling image "${image}": ErrImagePull: failed to pull image "${image}": manifest unknown`,
      retryAt: now + 9000,
    });
    expect(events.at(-1)).toBe(`web Normal BackOff: Back-off pulling image "${image}"`);
    expect(images.calls).toHaveLength(1);
    now += 9000;
    expect((await prepare([volume(image)])).get('data')!.unavailable!.reason).toBe('ErrImagePull');
    expect(images.calls).toHaveLength(2);
    now += 1000;
    // The back-off doubled: 20 s.
    expect((await prepare([volume(image)])).get('data')!.unavailable!.retryAt).toBe(now + 19_000);
    // A container that mounts it fails with the pull's reason and message; one that does not, starts.
    const prepared = await prepare([volume(image)]);
    const e = await resolveMounts(pod(), { name: 'app', image: 'x', volumeMounts: [{ name: 'data', mountPath: '/data' }] }, prepared).catch(
      (err: unknown) => err,
    );
    expect(isProviderError(e)).toBe(true);
    expect(e).toMatchObject({ reason: 'ImagePullBackOff', message: expect.stringContaining(`Back-off pulling image "${image}"`) });
    expect(await resolveMounts(pod(), { name: 'other', image: 'x' }, prepared)).toEqual([]);
  });

  it('tells a Never pull of a missing image and an invalid name as upstream, without a back-off', async () => {
    images.pullVolume = async (image) => {
      throw image.startsWith('Bad')
        ? providerError('ImagePull', `Failed to apply default image tag "${image}": invalid`, { reason: 'InvalidImageName' })
        : providerError('ImagePull', `Container image "${image}" is not present with pull policy of Never`, { reason: 'ErrImageNeverPull' });
    };
    const never = (await prepare([volume('registry.test/data:v9', 'Never')])).get('data')!;
    expect(never.unavailable).toEqual({
      reason: 'ErrImageNeverPull',
      message: 'Container image "registry.test/data:v9" is not present with pull policy of Never',
    });
    const bad = (await prepare([volume('Bad Name')])).get('data')!;
    expect(bad.unavailable!.reason).toBe('InvalidImageName');
    expect(events).toEqual([
      'web Warning ErrImageNeverPull: Container image "registry.test/data:v9" is not present with pull policy of Never',
      'web Warning InspectFailed: Failed to apply default image tag "Bad Name": invalid',
    ]);
  });

  it('releases the pod hold and forgets its back-off at tear-down', async () => {
    await prepare([volume('registry.test/missing:v1')]);
    await prepare([volume('registry.test/data:v1')]);
    expect(existsSync(path.join(podDir(), 'volumes', 'kubernetes.io~image', 'data'))).toBe(true);
    await teardownVolumes(podDir(), { plugins: registry });
    expect(images.released).toEqual(['uid-1234/data']);
    expect(existsSync(path.join(podDir(), 'volumes'))).toBe(false);
    // The back-off went with the pod: a new pull is tried at once.
    expect((await prepare([volume('registry.test/missing:v1')])).get('data')!.unavailable!.reason).toBe('ErrImagePull');
    expect(images.calls).toHaveLength(3);
  });

  it('resolves a subPath inside the image, never creating one, and refuses an escape', async () => {
    const prepared = await prepare([volume('registry.test/data:v1')]);
    const tree = images.content.get('registry.test/data:v1')!;
    const mounts = await resolveMounts(pod(), { name: 'app', image: 'x', volumeMounts: [{ name: 'data', mountPath: '/etc', subPath: 'etc' }] }, prepared);
    expect(mounts).toEqual([{ name: 'data', hostPath: path.join(tree, 'etc'), containerPath: '/etc', readOnly: true }]);
    const missing = await resolveMounts(
      pod(),
      { name: 'app', image: 'x', volumeMounts: [{ name: 'data', mountPath: '/x', subPath: 'not-existing' }] },
      prepared,
    ).catch((e: unknown) => e);
    expect(missing).toMatchObject({
      reason: 'CreateContainerError',
      message: 'failed to prepare subPath for volumeMount "data": "not-existing" does not exist in the image',
    });
    expect(existsSync(path.join(tree, 'not-existing'))).toBe(false);
    const escape = await resolveMounts(pod(), { name: 'app', image: 'x', volumeMounts: [{ name: 'data', mountPath: '/x', subPath: '../..' }] }, prepared).catch(
      (e: unknown) => e,
    );
    expect(escape).toMatchObject({ code: 'NDL_PATH_ESCAPE' });
  });
});
