/**
 * OCI / docker v2 manifests as nodelet reads them: media types, parsing, the
 * choice of a WebAssembly platform in an image index, and the choice of the
 * runnable layer in a single-layer Wasm artifact.
 *
 * Wasm artifact formats understood (both are one manifest with one module layer):
 *   CNCF (wasm.cncf.io):  config application/vnd.wasm.config.v0+json, layer application/wasm
 *                         (also what wkg / wasm-pkg-tools push: config os wasip2 with a
 *                         `component` section, no artifactType; the layer holds a component)
 *   wasm-to-oci/Krustlet: config application/vnd.wasm.config.v1+json, layer application/vnd.wasm.content.layer.v1+wasm
 * and a third, "compat" OCI images with tar layers, handled by compat-image.ts.
 */
import { nodeletError } from '../errors/index.ts';

export const OCI_MANIFEST = 'application/vnd.oci.image.manifest.v1+json';
export const OCI_INDEX = 'application/vnd.oci.image.index.v1+json';
const DOCKER_MANIFEST = 'application/vnd.docker.distribution.manifest.v2+json';
const DOCKER_MANIFEST_LIST = 'application/vnd.docker.distribution.manifest.list.v2+json';
/** The layer media types of the two Wasm artifact formats. */
export const WASM_LAYER_TYPES = ['application/wasm', 'application/vnd.wasm.content.layer.v1+wasm'] as const;

/** What nodelet sends as `Accept` when it asks for a manifest. */
export const MANIFEST_ACCEPT = [OCI_MANIFEST, OCI_INDEX, DOCKER_MANIFEST, DOCKER_MANIFEST_LIST].join(', ');

/** Platforms (os / architecture) that name a WASI module (wasip1) or component (wasip2) in an image index. */
const WASM_OS = ['wasip1', 'wasi', 'wasip2'];
const WASM_ARCH = ['wasm', 'wasm32'];

/** A content descriptor. */
export interface Descriptor {
  readonly mediaType: string;
  readonly digest: string;
  readonly size: number;
  readonly platform?: { readonly os?: string; readonly architecture?: string; readonly variant?: string };
  /** e.g. `org.opencontainers.image.title`, which names an artifact layer's file. */
  readonly annotations?: Readonly<Record<string, string>>;
}

/** A parsed manifest: either an image manifest (`layers`) or an index (`manifests`). */
export type ParsedManifest =
  | { readonly kind: 'manifest'; readonly mediaType: string; readonly config?: Descriptor; readonly layers: readonly Descriptor[] }
  | { readonly kind: 'index'; readonly mediaType: string; readonly manifests: readonly Descriptor[] };

const formatError = (detail: string) => nodeletError('NDL_IMAGE_FORMAT', detail);

function isDescriptor(d: unknown): d is Descriptor {
  const o = d as Record<string, unknown> | null;
  return (
    typeof o === 'object' &&
    o !== null &&
    typeof o.mediaType === 'string' &&
    typeof o.digest === 'string' &&
    /^sha256:[0-9a-f]{64}$/.test(o.digest) &&
    Number.isSafeInteger(o.size) &&
    (o.size as number) >= 0
  );
}

function descriptors(list: unknown, what: string): Descriptor[] {
  if (!Array.isArray(list) || !list.every(isDescriptor)) throw formatError(`manifest has malformed ${what}`);
  return list;
}

/**
 * Parses manifest bytes. `contentType` (the response's Content-Type) wins over
 * the body's `mediaType`, which some producers (wasm-to-oci) leave out.
 */
export function parseManifest(bytes: Uint8Array, contentType?: string): ParsedManifest {
  let body: Record<string, unknown>;
  try {
    body = JSON.parse(Buffer.from(bytes).toString('utf8'));
  } catch {
    throw formatError(`manifest is not JSON (media type ${contentType || 'unknown'})`);
  }
  if (typeof body !== 'object' || body === null) throw formatError('manifest is not a JSON object');
  const declared = contentType?.split(';')[0]?.trim();
  const bodyType = typeof body.mediaType === 'string' ? body.mediaType : undefined;
  const mediaType = declared && declared !== 'application/json' ? declared : (bodyType ?? (body.manifests ? OCI_INDEX : OCI_MANIFEST));
  if (mediaType === OCI_INDEX || mediaType === DOCKER_MANIFEST_LIST) {
    return { kind: 'index', mediaType, manifests: descriptors(body.manifests, 'manifests') };
  }
  if (mediaType === OCI_MANIFEST || mediaType === DOCKER_MANIFEST) {
    const config = body.config === undefined ? undefined : descriptors([body.config], 'config')[0];
    return { kind: 'manifest', mediaType, config, layers: descriptors(body.layers, 'layers') };
  }
  throw formatError(`media types found: manifest ${mediaType}`);
}

function platformName(d: Descriptor): string {
  const p = d.platform;
  if (!p) return 'unknown platform';
  return [p.os ?? '?', p.architecture ?? '?', p.variant].filter(Boolean).join('/');
}

/** Picks the WASI entry of an index (os wasip1|wasi|wasip2, architecture wasm|wasm32), else fails naming what was found. */
export function selectWasmPlatform(index: ParsedManifest & { kind: 'index' }): Descriptor {
  const match = index.manifests.find((d) => WASM_OS.includes(d.platform?.os ?? '') && WASM_ARCH.includes(d.platform?.architecture ?? ''));
  if (match) return match;
  const found = index.manifests.map(platformName).join(', ') || 'no entries';
  throw formatError(`image index has no WebAssembly platform (${WASM_OS.join('|')}/${WASM_ARCH.join('|')}): found ${found}`);
}

/** Picks the runnable layer: the first of `accept` (in preference order) that the manifest has. */
export function selectLayer(manifest: ParsedManifest & { kind: 'manifest' }, accept: readonly string[]): Descriptor {
  for (const type of accept) {
    const layer = manifest.layers.find((l) => l.mediaType === type);
    if (layer) return layer;
  }
  const layers = [...new Set(manifest.layers.map((l) => l.mediaType))].join(', ') || 'none';
  const config = manifest.config?.mediaType ?? 'none';
  throw formatError(`media types found: manifest ${manifest.mediaType}, config ${config}, layers ${layers} (accepted layers: ${accept.join(', ')})`);
}
