/**
 * What an image volume can be made of, and how one layer blob streams into
 * the tree being unpacked (tree-unpacker.ts), verified as it streams.
 *
 *   an image (config application/vnd.oci.image.config.v1+json, or docker's):
 *     every layer a tar, tar+gzip or tar+zstd (or docker's tar.gzip), unpacked in order
 *   an artifact (any other config, e.g. application/vnd.oci.empty.v1+json):
 *     each layer one file, named by its `org.opencontainers.image.title`
 *     annotation, else `sha256-<hex>` (podman's `artifact extract` rule; CRI-O
 *     mounts artifacts the same way)
 *
 *   blob body ─▶ size ≤ declared ─▶ sha256 ─┬─▶ [gunzip | zstd] ─▶ tar ─▶ unpacker
 *                                           └─ a decoding failure stops the decoding only:
 *                                              the rest is read for the digest, so a
 *                                              tampered blob reads as a digest mismatch
 *
 * An image index gives its WebAssembly entry, else the node's own platform
 * (linux/<arch>), else its only entry for a known platform.
 */
import { createHash } from 'node:crypto';
import { PassThrough, Readable, type Duplex } from 'node:stream';
import zlib from 'node:zlib';
import { isNodeletError, nodeletError } from '../errors/index.ts';
import type { Descriptor, ParsedManifest } from './manifest.ts';
import { writable } from './writable.ts';

/** Layer media types an image volume unpacks, with their compression. */
export const VOLUME_LAYER_TYPES: Readonly<Record<string, 'none' | 'gzip' | 'zstd'>> = {
  'application/vnd.oci.image.layer.v1.tar': 'none',
  'application/vnd.oci.image.layer.v1.tar+gzip': 'gzip',
  'application/vnd.oci.image.layer.v1.tar+zstd': 'zstd',
  'application/vnd.docker.image.rootfs.diff.tar.gzip': 'gzip',
};

/** Config media types that make a manifest an image (its layers are file systems); any other makes it an artifact. */
const IMAGE_CONFIGS = ['application/vnd.oci.image.config.v1+json', 'application/vnd.docker.container.image.v1+json'];

/** The annotation naming an artifact layer's file. */
const TITLE = 'org.opencontainers.image.title';

const WASM_OS = ['wasip1', 'wasi', 'wasip2'];
const WASM_ARCH = ['wasm', 'wasm32'];
/** Node's `process.arch` as OCI names it. */
const OCI_ARCH: Partial<Record<NodeJS.Architecture, string>> = {
  x64: 'amd64',
  arm64: 'arm64',
  arm: 'arm',
  ia32: '386',
  ppc64: 'ppc64le',
  s390x: 's390x',
  riscv64: 'riscv64',
};

const formatError = (detail: string) => nodeletError('NDL_IMAGE_FORMAT', detail);

/** How a manifest's layers become a volume. */
export type VolumeLayout =
  | { readonly kind: 'image'; readonly layers: readonly Descriptor[] }
  | { readonly kind: 'artifact'; readonly files: readonly { layer: Descriptor; name: string }[] };

/** The layout of a manifest as an image volume; throws NDL_IMAGE_FORMAT naming the layers it cannot unpack. */
export function volumeLayout(manifest: ParsedManifest & { kind: 'manifest' }): VolumeLayout {
  if (manifest.config === undefined || IMAGE_CONFIGS.includes(manifest.config.mediaType)) {
    const bad = manifest.layers.filter((l) => !(l.mediaType in VOLUME_LAYER_TYPES));
    if (bad.length > 0) {
      const types = [...new Set(bad.map((l) => l.mediaType))].join(', ');
      throw formatError(`an image volume unpacks tar layers (${Object.keys(VOLUME_LAYER_TYPES).join(', ')}); this image has layers of type ${types}`);
    }
    return { kind: 'image', layers: manifest.layers };
  }
  const files = manifest.layers.map((layer) => {
    const title: unknown = layer.annotations?.[TITLE];
    return { layer, name: typeof title === 'string' && title !== '' ? title : `sha256-${layer.digest.slice('sha256:'.length)}` };
  });
  return { kind: 'artifact', files };
}

/** The entry of an index an image volume mounts; throws NDL_IMAGE_FORMAT naming the platforms found. */
export function selectVolumePlatform(index: ParsedManifest & { kind: 'index' }, arch: NodeJS.Architecture = process.arch): Descriptor {
  const p = (d: Descriptor) => d.platform ?? {};
  const wasm = index.manifests.find((d) => WASM_OS.includes(p(d).os ?? '') && WASM_ARCH.includes(p(d).architecture ?? ''));
  if (wasm) return wasm;
  const own = index.manifests.find((d) => p(d).os === 'linux' && p(d).architecture === OCI_ARCH[arch]);
  if (own) return own;
  const known = index.manifests.filter((d) => p(d).os !== 'unknown');
  if (known.length === 1) return known[0]!;
  const found = index.manifests.map((d) => [p(d).os ?? '?', p(d).architecture ?? '?', p(d).variant].filter(Boolean).join('/')).join(', ') || 'no entries';
  throw formatError(`image index has no entry for this node (wasip1/wasm, linux/${OCI_ARCH[arch] ?? arch}): found ${found}`);
}

/** A decompressor for a layer's media type (a pass-through for a plain tar or an artifact's file). */
function decoderFor(mediaType: string): Duplex {
  const kind = VOLUME_LAYER_TYPES[mediaType] ?? 'none';
  if (kind === 'gzip') return zlib.createGunzip();
  if (kind === 'zstd') return zlib.createZstdDecompress();
  return new PassThrough();
}

/**
 * Streams one layer blob into `consume` (decompressed), checking its size and
 * digest. Throws NDL_IMAGE_DIGEST for content that does not match the
 * descriptor (even when it also failed to decode), else what `consume` threw.
 */
export async function streamLayer(layer: Descriptor, body: Readable, consume: (decoded: Readable) => Promise<void>): Promise<void> {
  const decoder = decoderFor(layer.mediaType);
  let decodeError: unknown;
  // Never unhandled: a decoding error after the consumer stopped reading (gzip's "unexpected end of file").
  decoder.on('error', (e: unknown) => (decodeError ??= e));
  const consuming = consume(decoder).catch((e: unknown) => {
    decodeError ??= e;
    decoder.destroy();
  });
  const hash = createHash('sha256');
  let size = 0;
  try {
    for await (const c of body) {
      const chunk = c as Buffer;
      size += chunk.length;
      if (size > layer.size) throw nodeletError('NDL_IMAGE_DIGEST', `blob ${layer.digest} is larger than its declared ${layer.size} bytes`);
      hash.update(chunk);
      if (!decoder.destroyed && !decoder.write(chunk)) await writable(decoder);
    }
  } catch (e) {
    decoder.destroy();
    await consuming;
    throw e;
  }
  if (!decoder.destroyed) decoder.end();
  await consuming;
  const got = `sha256:${hash.digest('hex')}`;
  if (got !== layer.digest) throw nodeletError('NDL_IMAGE_DIGEST', `blob ${layer.digest}: received content has digest ${got}`);
  if (size !== layer.size) throw nodeletError('NDL_IMAGE_DIGEST', `blob ${layer.digest}: received ${size} bytes, expected ${layer.size}`);
  if (decodeError !== undefined) {
    if (isNodeletError(decodeError)) throw decodeError;
    throw formatError(`layer ${layer.digest} cannot be read as ${layer.mediaType}: ${(decodeError as Error).message}`);
  }
}
