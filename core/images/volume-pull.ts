/**
 * Fetching an image volume: the manifest a reference resolves to, then its
 * layers streamed (verified) into a fresh tree, put in place whole under the
 * manifest's digest (tree-store.ts). One unpacking per digest at a time; a
 * digest already unpacked costs the manifest request only.
 *
 *   reference ─▶ [pinned digest unpacked? done] ─▶ manifest ─▶ [digest unpacked? done]
 *     ─▶ [index ─▶ entry for this node] ─▶ layout (image: tar layers | artifact: files)
 *     ─▶ scratch dir ─▶ each layer: blob ─▶ verify ─▶ decompress ─▶ unpack ─▶ read-only ─▶ in place
 *
 * The unpacking may use what the image filesystem has free down to 5 % of it
 * (bytes and inodes): a layer that decompresses to more fails with
 * NDL_IMAGE_FORMAT instead of filling the disk.
 */
import { statfs } from 'node:fs/promises';
import type { PullPolicy, RegistryCredential } from '@nodelet/plugin-api/v1';
import { nodeletError } from '../errors/index.ts';
import { parseManifest } from './manifest.ts';
import { manifestReferenceOf, repositoryOf, type ImageReference } from './reference.ts';
import type { RegistryClient, RepositoryTarget } from './registry-client.ts';
import type { SingleFlight } from './single-flight.ts';
import { removeUnpackedTree, type TreeEntry, type TreeStore } from './tree-store.ts';
import { TreeUnpacker, type UnpackLimits } from './tree-unpacker.ts';
import { selectVolumePlatform, streamLayer, volumeLayout, type VolumeLayout } from './volume-layers.ts';

/** Part of the image filesystem an unpacking leaves free (bytes and inodes). */
const RESERVE = 0.05;

/** What {@link fetchImageVolume} works with (the image service's parts). */
export interface VolumeFetchDeps {
  readonly client: RegistryClient;
  readonly trees: TreeStore;
  /** One unpacking per digest. */
  readonly unpacks: SingleFlight<void>;
  /** The image filesystem's free space (default `statfs(2)`; tests inject one). */
  readonly limits?: (dir: string) => Promise<UnpackLimits>;
}

/** What the image filesystem holding `dir` can take, less {@link RESERVE}; unlimited when it cannot be asked. */
export async function freeSpaceLimits(dir: string): Promise<UnpackLimits> {
  try {
    const s = await statfs(dir);
    const maxBytes = Math.max(0, Math.floor((s.bavail - s.blocks * RESERVE) * s.bsize));
    // A filesystem without a fixed inode table (btrfs) reports 0 files.
    const maxEntries = s.files > 0 ? Math.max(0, Math.floor(s.ffree - s.files * RESERVE)) : Number.MAX_SAFE_INTEGER;
    return { maxBytes, maxEntries };
  } catch {
    return { maxBytes: Number.MAX_SAFE_INTEGER, maxEntries: Number.MAX_SAFE_INTEGER };
  }
}

/** Unpacks `layout` into a new tree and puts it in place as `digest`. */
async function unpack(
  deps: VolumeFetchDeps,
  digest: string,
  repository: string,
  layout: VolumeLayout,
  keys: string[],
  target: RepositoryTarget,
): Promise<void> {
  const dir = await deps.trees.scratch();
  try {
    const unpacker = new TreeUnpacker(dir, await (deps.limits ?? freeSpaceLimits)(dir));
    const open = async (digestOf: string) => (await deps.client.getBlob(target, digestOf)).body;
    if (layout.kind === 'image') {
      for (const layer of layout.layers) await streamLayer(layer, await open(layer.digest), (tar) => unpacker.applyLayer(tar, layer.digest));
    } else {
      for (const { layer, name } of layout.files) {
        await streamLayer(layer, await open(layer.digest), (file) => unpacker.addFile(file, name, layer.size, layer.digest));
      }
    }
    const size = await unpacker.finish();
    await deps.trees.install(digest, dir, { repository, size }, keys);
  } catch (e) {
    await removeUnpackedTree(dir, deps.trees.tmpDir).catch(() => undefined);
    throw e;
  }
}

/**
 * The tree `ref` resolves to now, unpacked if it was not; `key` (the formatted
 * reference) and `repository@digest` are recorded for it. `cached` is true when
 * no layer had to be fetched.
 */
export async function fetchImageVolume(
  deps: VolumeFetchDeps,
  ref: ImageReference,
  key: string,
  target: RepositoryTarget,
): Promise<{ entry: TreeEntry; cached: boolean }> {
  const repository = repositoryOf(ref);
  const known = async (digest: string) => {
    const entry = deps.trees.entry(digest);
    if (entry) await deps.trees.record([key, `${repository}@${digest}`], digest);
    return entry && { entry, cached: true };
  };
  const pinned = ref.digest ? await known(ref.digest) : undefined;
  if (pinned) return pinned;
  const top = await deps.client.getManifest(target, manifestReferenceOf(ref));
  const hit = await known(top.digest);
  if (hit) return hit;
  let manifest = parseManifest(top.bytes, top.mediaType);
  if (manifest.kind === 'index') {
    const entry = selectVolumePlatform(manifest);
    const child = await deps.client.getManifest(target, entry.digest);
    manifest = parseManifest(child.bytes, child.mediaType ?? entry.mediaType);
    if (manifest.kind !== 'manifest') throw nodeletError('NDL_IMAGE_FORMAT', `image index entry ${entry.digest} is itself an index`);
  }
  const layout = volumeLayout(manifest);
  const keys = [key, `${repository}@${top.digest}`];
  await deps.unpacks.do(
    top.digest,
    async (signal) => {
      if (!deps.trees.has(top.digest)) await unpack(deps, top.digest, repository, layout, keys, { ...target, signal });
    },
    target.signal,
  );
  const entry = deps.trees.entry(top.digest);
  if (!entry) throw nodeletError('NDL_IMAGE_PULL', `image ${top.digest} was removed while it was being unpacked`);
  await deps.trees.record(keys, top.digest);
  return { entry, cached: false };
}

/** A pull of an image volume. */
export interface ImageVolumeRequest {
  /** The volume's `pullPolicy` (defaulted by the caller: {@link defaultPullPolicy}). */
  readonly pullPolicy: PullPolicy;
  /** Credentials from the pod's imagePullSecrets. */
  readonly credentials: readonly RegistryCredential[];
  readonly signal?: AbortSignal;
  /**
   * Who uses the tree from now on (a pod's volume, `<pod uid>/<volume>`): image GC keeps
   * every tree held until {@link ImageVolumeService.releaseVolumes} of that holder.
   */
  readonly holder?: string;
}

/** An image volume ready to be mounted. */
export interface PulledImageVolume {
  /** The reference as written in the pod spec. */
  readonly image: string;
  /** `<repository>@<digest>`. */
  readonly imageID: string;
  /** The manifest (or index) digest. */
  readonly digest: string;
  /** The read-only directory holding the image's content (shared by every pod using this digest). */
  readonly path: string;
  /** Bytes of file content. */
  readonly size: number;
  /** True when nothing had to be fetched. */
  readonly cached: boolean;
}

/** What the image volume plugin needs of the image service. */
export interface ImageVolumeService {
  /** Pulls (or finds unpacked) `image` per `req.pullPolicy`. Failures are `ImagePull` provider errors with the kubelet's reasons. */
  pullVolume(image: string, req: ImageVolumeRequest): Promise<PulledImageVolume>;
  /** Drops the holds of `holder` (its pod's volume was torn down): image GC may then remove the trees it used. */
  releaseVolumes(holder: string): void;
}

/** Upstream's default pull policy of an image volume (and a container): `Always` for `:latest` or no tag, else `IfNotPresent`. */
export function defaultPullPolicy(image: string): PullPolicy {
  return /:latest$|^[^:@]*$/.test(image.replace(/^[^/]*\//, '')) ? 'Always' : 'IfNotPresent';
}
