/**
 * Pushing Wasm artifacts to a test registry with plain fetch: monolithic blob
 * uploads (`POST /v2/<repo>/blobs/uploads/` then `PUT <location>?digest=`), then
 * `PUT /v2/<repo>/manifests/<tag>`. Formats:
 *   cncf        config application/vnd.wasm.config.v0+json, layer application/wasm (wasm.cncf.io)
 *   wasm-to-oci config application/vnd.wasm.config.v1+json, layer application/vnd.wasm.content.layer.v1+wasm
 */
import { createHash } from 'node:crypto';

export const OCI_MANIFEST = 'application/vnd.oci.image.manifest.v1+json';
export const OCI_INDEX = 'application/vnd.oci.image.index.v1+json';

/** Basic-auth user for registries started with `auth`. */
export interface PushAuth {
  readonly username: string;
  readonly password: string;
}

/** A blob to upload. */
export interface Blob {
  readonly mediaType: string;
  readonly bytes: Uint8Array;
}

/** What a push returns. */
export interface Pushed {
  /** `sha256:<hex>` of the manifest. */
  readonly digest: string;
  /** The manifest bytes as pushed. */
  readonly manifest: Buffer;
  /** Descriptors of the layers pushed, in order. */
  readonly layers: { mediaType: string; digest: string; size: number }[];
}

const FORMATS = {
  cncf: { config: 'application/vnd.wasm.config.v0+json', layer: 'application/wasm' },
  'wasm-to-oci': { config: 'application/vnd.wasm.config.v1+json', layer: 'application/vnd.wasm.content.layer.v1+wasm' },
} as const;

/** `sha256:<hex>` of some bytes. */
export function sha256(bytes: Uint8Array): string {
  return `sha256:${createHash('sha256').update(bytes).digest('hex')}`;
}

function headers(auth: PushAuth | undefined, extra: Record<string, string> = {}): Record<string, string> {
  return auth ? { ...extra, Authorization: `Basic ${Buffer.from(`${auth.username}:${auth.password}`).toString('base64')}` } : extra;
}

async function check(res: Response, what: string): Promise<Response> {
  if (!res.ok) throw new Error(`${what}: HTTP ${res.status} ${await res.text()}`);
  return res;
}

/** Uploads one blob monolithically; returns its descriptor. */
export async function pushBlob(registryHost: string, repo: string, blob: Blob, auth?: PushAuth) {
  const base = `http://${registryHost}/v2/${repo}/blobs/uploads/`;
  const start = await check(await fetch(base, { method: 'POST', headers: headers(auth) }), `POST ${base}`);
  await start.arrayBuffer();
  const location = new URL(start.headers.get('location')!, base);
  const digest = sha256(blob.bytes);
  location.searchParams.set('digest', digest);
  const put = await fetch(location, {
    method: 'PUT',
    body: Buffer.from(blob.bytes) as unknown as BodyInit,
    headers: headers(auth, { 'Content-Type': 'application/octet-stream' }),
  });
  await (await check(put, `PUT blob ${digest}`)).arrayBuffer();
  return { mediaType: blob.mediaType, digest, size: blob.bytes.length };
}

/** PUTs a manifest (any JSON body) under `reference`; returns its digest. */
export async function pushManifest(registryHost: string, repo: string, reference: string, body: object, mediaType: string, auth?: PushAuth) {
  const bytes = Buffer.from(JSON.stringify(body));
  const url = `http://${registryHost}/v2/${repo}/manifests/${reference}`;
  const res = await fetch(url, { method: 'PUT', body: bytes, headers: headers(auth, { 'Content-Type': mediaType }) });
  await (await check(res, `PUT ${url}`)).arrayBuffer();
  return { digest: sha256(bytes), manifest: bytes };
}

/** Pushes an image manifest with a config blob and arbitrary layers (for unsupported-format tests). */
export async function pushImage(
  registryHost: string,
  repo: string,
  tag: string,
  config: Blob,
  layers: Blob[],
  opts: { auth?: PushAuth; manifestMediaType?: string; artifactType?: string; omitMediaType?: boolean } = {},
): Promise<Pushed> {
  const configDesc = await pushBlob(registryHost, repo, config, opts.auth);
  const layerDescs = [];
  for (const l of layers) layerDescs.push(await pushBlob(registryHost, repo, l, opts.auth));
  const mediaType = opts.manifestMediaType ?? OCI_MANIFEST;
  const body = {
    schemaVersion: 2,
    ...(!opts.omitMediaType && { mediaType }),
    ...(opts.artifactType && { artifactType: opts.artifactType }),
    config: configDesc,
    layers: layerDescs,
  };
  const { digest, manifest } = await pushManifest(registryHost, repo, tag, body, mediaType, opts.auth);
  return { digest, manifest, layers: layerDescs };
}

/** Pushes a single-layer Wasm artifact in one of the two formats; returns the manifest digest and layers. */
export async function pushWasmArtifact(
  registryHost: string,
  repo: string,
  tag: string,
  wasmBytes: Uint8Array,
  opts: { format?: keyof typeof FORMATS; auth?: PushAuth } = {},
): Promise<Pushed> {
  const format = FORMATS[opts.format ?? 'cncf'];
  const config = { mediaType: format.config, bytes: Buffer.from(JSON.stringify({ created: '2026-01-01T00:00:00Z', architecture: 'wasm', os: 'wasip1' })) };
  return pushImage(registryHost, repo, tag, config, [{ mediaType: format.layer, bytes: wasmBytes }], {
    auth: opts.auth,
    // wasm-to-oci (ORAS) leaves `mediaType` out of the body; the Content-Type says it.
    artifactType: opts.format === 'wasm-to-oci' ? undefined : format.config,
    omitMediaType: opts.format === 'wasm-to-oci',
  });
}

/** One platform entry of an index: an already pushed manifest. */
export interface IndexEntry {
  readonly digest: string;
  readonly size: number;
  readonly os: string;
  readonly architecture: string;
  readonly mediaType?: string;
}

/** Pushes an OCI image index over manifests already in `repo`; returns its digest. */
export async function pushIndex(registryHost: string, repo: string, tag: string, entries: IndexEntry[], auth?: PushAuth): Promise<Pushed> {
  const body = {
    schemaVersion: 2,
    mediaType: OCI_INDEX,
    manifests: entries.map((e) => ({
      mediaType: e.mediaType ?? OCI_MANIFEST,
      digest: e.digest,
      size: e.size,
      platform: { os: e.os, architecture: e.architecture },
    })),
  };
  const { digest, manifest } = await pushManifest(registryHost, repo, tag, body, OCI_INDEX, auth);
  return { digest, manifest, layers: [] };
}

/** A tiny "module": the Wasm header plus `extra` bytes (the store never runs it). */
export function tinyModule(extra = 'nodelet'): Buffer {
  return Buffer.concat([Buffer.from([0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00]), Buffer.from(extra)]);
}
