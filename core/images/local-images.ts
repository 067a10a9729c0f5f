/**
 * The image service core hands to providers: the OCI client for registry
 * references, plus `file://` references for modules on local disk — accepted
 * only inside the static pod manifest directory (a trusted source, like the
 * manifests themselves), so API pods cannot read host files as images.
 */
import { imagePulls } from '../metrics/index.ts';
import { createHash } from 'node:crypto';
import { realpath, stat } from 'node:fs/promises';
import { dirname, join, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { V1ContainerImage, V1Pod } from '@kubernetes/client-node';
import { providerError, type ImageRequest, type ImageService, type Logger, type PulledImage } from '@nodelet/plugin-api/v1';
import type { NodeletOptions } from '../config/index.ts';
import { isNodeletError } from '../errors/index.ts';
import { openRegularFile } from '../paths/index.ts';
import { startPeriodicGc, type DiskUsageFn, type ImageGcResult } from './image-gc.ts';
import { OciImageService } from './image-service.ts';
import type { ImageVolumeService } from './volume-pull.ts';

/** The image service with `status.images` support, image GC and image volumes. */
export interface NodeImageService extends ImageService, ImageVolumeService {
  nodeImages(): V1ContainerImage[];
  /**
   * Starts periodic image GC with the options' thresholds (`--image-gc-high-threshold` 100
   * disables it). `inUse` lists the images of the node's pods (spec references or image IDs);
   * `onFailure` gets upstream's FreeDiskSpaceFailed message. Returns a stop function.
   */
  startGc(inUse: () => Iterable<string>, onFailure?: (message: string) => void): () => void;
  /** Deletes unused images until `bytes` are freed (disk pressure); resolves to the bytes freed. */
  reclaim(bytes: number, inUse: Iterable<string>): Promise<number>;
  /** The directory of the image store (imagefs). */
  readonly storeDir: string;
  /** One GC pass now (for tests and tools). */
  garbageCollect(inUse: Iterable<string>, diskUsage?: DiskUsageFn): Promise<ImageGcResult>;
}

/** The images of pods: every container's and init container's `image`, and every image volume's `reference`. */
export function podImages(pods: readonly V1Pod[]): string[] {
  return pods
    .flatMap((p) => [
      ...[...(p.spec?.initContainers ?? []), ...(p.spec?.containers ?? [])].map((c) => c.image ?? ''),
      ...(p.spec?.volumes ?? []).map((v) => v.image?.reference ?? ''),
    ])
    .filter(Boolean);
}

/**
 * A `file://` module inside `allowedRoot` (the manifest directory, or the directory of
 * a single manifest file). Only a regular file is opened, without blocking, and hashed as
 * it streams.
 */
async function localPull(image: string, allowedRoot: string | undefined): Promise<PulledImage> {
  const fail = (msg: string) => providerError('ImagePull', `failed to pull image "${image}": ${msg}`, { reason: 'ErrImagePull' });
  if (!allowedRoot) throw fail('file:// images are only allowed for static pods');
  let path: string;
  let root: string;
  try {
    path = await realpath(fileURLToPath(image));
    root = await realpath(allowedRoot);
    if ((await stat(root)).isFile()) root = dirname(root);
  } catch {
    throw fail('no such file');
  }
  if (!path.startsWith(root + sep)) throw fail(`file:// images must be inside the pod manifest directory ${root}`);
  let fh;
  try {
    fh = await openRegularFile(path, 'NDL_IMAGE_PULL');
  } catch (e) {
    throw fail(isNodeletError(e) ? 'not a regular file' : 'no such file');
  }
  try {
    const hash = createHash('sha256');
    let size = 0;
    for await (const chunk of fh.createReadStream({ autoClose: false })) {
      hash.update(chunk as Buffer);
      size += (chunk as Buffer).length;
    }
    const digest = `sha256:${hash.digest('hex')}`;
    return { image, imageID: `${image}@${digest}`, digest, path, size, cached: true };
  } finally {
    await fh.close();
  }
}

/** Opens the image store and returns the node's image service. */
export async function openImageService(o: NodeletOptions, log: Logger): Promise<NodeImageService> {
  const oci = await OciImageService.open({ rootDir: o.rootDir, insecureRegistries: o.insecureRegistries, noProgressTimeoutMs: o.imagePullProgressDeadlineMs });
  log.debug({ root: o.rootDir }, 'image store opened');
  const policy = { highThresholdPercent: o.imageGCHighThresholdPercent, lowThresholdPercent: o.imageGCLowThresholdPercent, minAgeMs: 2 * 60_000 };
  return {
    async pull(image: string, req: ImageRequest): Promise<PulledImage> {
      try {
        const pulled = await (image.startsWith('file://') ? localPull(image, o.podManifestPath) : oci.pull(image, req));
        imagePulls.inc({ result: 'success' });
        return pulled;
      } catch (e) {
        imagePulls.inc({ result: 'failure' });
        throw e;
      }
    },
    async pullVolume(image, req) {
      try {
        const pulled = await oci.pullVolume(image, req);
        imagePulls.inc({ result: 'success' });
        return pulled;
      } catch (e) {
        imagePulls.inc({ result: 'failure' });
        throw e;
      }
    },
    releaseVolumes: (holder) => oci.releaseVolumes(holder),
    nodeImages: () => oci.list().map((i) => ({ names: i.names, sizeBytes: i.sizeBytes })),
    reclaim: (bytes, inUse) => oci.deleteUnused(bytes, inUse, policy.minAgeMs),
    storeDir: join(o.rootDir, 'images'),
    garbageCollect: (inUse, diskUsage) => oci.garbageCollect(policy, inUse, diskUsage),
    startGc(inUse, onFailure) {
      if (policy.highThresholdPercent >= 100) return () => undefined;
      return startPeriodicGc(() => oci.garbageCollect(policy, inUse()), { log, onFailure });
    },
  };
}
