/**
 * Publishing a Wasm module as a CNCF Wasm OCI artifact
 * (config `application/vnd.wasm.config.v0+json`, one `application/wasm` layer):
 *
 *   for config, module:  HEAD blobs/<digest> ── 200 ──▶ skip (already there)
 *                          └ 404 ─▶ POST blobs/uploads/ ─▶ Location
 *                                   small: PUT <location>?digest=
 *                                   large: PATCH <location> (Content-Range) × n ─▶ PUT <location>?digest=
 *   PUT manifests/<tag|digest> (application/vnd.oci.image.manifest.v1+json, artifactType)
 *
 * Authentication is the pull client's (basic or bearer, scope `repository:<repo>:push,pull`).
 */
import { createHash } from 'node:crypto';
import type { RegistryCredential } from '@nodelet/plugin-api/v1';
import { nodeletError } from '../errors/index.ts';
import { OCI_MANIFEST } from './manifest.ts';
import { formatReference, manifestReferenceOf, registryHostOf, repositoryOf, type ImageReference } from './reference.ts';
import { discardBody } from './body-limits.ts';
import { RegistryClient, type RegistryClientOptions, type RepositoryTarget } from './registry-client.ts';
import { headerOf, type RegistryResponse } from './registry-transport.ts';

const WASM_CONFIG_TYPE = 'application/vnd.wasm.config.v0+json';
const WASM_LAYER_TYPE = 'application/wasm';
/** Blobs larger than this are uploaded in chunks of this size. */
export const DEFAULT_CHUNK_BYTES = 4 << 20;

/** Upload progress of one blob. */
export interface PushProgress {
  readonly digest: string;
  readonly sentBytes: number;
  readonly totalBytes: number;
}

/** Options of {@link pushWasmModule}. */
export interface PushOptions extends RegistryClientOptions {
  readonly credential?: RegistryCredential;
  readonly chunkBytes?: number;
  /** Called after each chunk of a chunked upload. */
  readonly onProgress?: (p: PushProgress) => void;
  readonly signal?: AbortSignal;
  /** Annotations for the manifest (`org.opencontainers.image.*`). */
  readonly annotations?: Readonly<Record<string, string>>;
}

/** What was pushed. */
export interface PushResult {
  /** `repository@sha256:...` of the manifest. */
  readonly imageID: string;
  readonly digest: string;
  readonly moduleDigest: string;
  readonly size: number;
  /** Blobs the registry already had. */
  readonly skipped: readonly string[];
}

const sha256 = (b: Uint8Array) => `sha256:${createHash('sha256').update(b).digest('hex')}`;

class Pusher {
  readonly skipped: string[] = [];
  constructor(
    private readonly client: RegistryClient,
    private readonly t: RepositoryTarget,
    private readonly opts: PushOptions,
  ) {}

  /** Uploads a blob unless the registry has it; returns its descriptor. */
  async blob(mediaType: string, bytes: Uint8Array): Promise<{ mediaType: string; digest: string; size: number }> {
    const digest = sha256(bytes);
    const head = await this.client.pushRequest(this.t, 'HEAD', `blobs/${digest}`, { okStatus: [404] });
    if (head.status === 200) {
      this.skipped.push(digest);
    } else {
      await this.upload(digest, bytes);
    }
    return { mediaType, digest, size: bytes.length };
  }

  private async upload(digest: string, bytes: Uint8Array): Promise<void> {
    const start = await this.client.pushRequest(this.t, 'POST', 'blobs/uploads/');
    await discardBody(start.body);
    let location = this.location(start);
    const chunk = this.opts.chunkBytes ?? DEFAULT_CHUNK_BYTES;
    let body: Uint8Array = bytes;
    if (bytes.length > chunk) {
      for (let sent = 0; sent < bytes.length; sent += chunk) {
        const part = bytes.subarray(sent, Math.min(sent + chunk, bytes.length));
        const res = await this.client.pushRequest(this.t, 'PATCH', location.href, {
          body: part,
          headers: { 'Content-Type': 'application/octet-stream', 'Content-Range': `${sent}-${sent + part.length - 1}` },
        });
        await discardBody(res.body);
        location = this.location(res);
        this.opts.onProgress?.({ digest, sentBytes: sent + part.length, totalBytes: bytes.length });
      }
      body = new Uint8Array(0);
    }
    location.searchParams.set('digest', digest);
    const put = await this.client.pushRequest(this.t, 'PUT', location.href, { body, headers: { 'Content-Type': 'application/octet-stream' } });
    await discardBody(put.body);
  }

  /** The upload URL the registry answered with (it may be relative). */
  private location(res: RegistryResponse): URL {
    const loc = headerOf(res, 'location');
    if (!loc) throw nodeletError('NDL_IMAGE_PULL', `registry answered ${res.status} to an upload without a Location`);
    return new URL(loc, this.client.baseUrl(this.t));
  }
}

/** Pushes `module` (a core module or a WASI 0.2 component) to `ref` as a CNCF Wasm artifact. */
export async function pushWasmModule(ref: ImageReference, module: Uint8Array, opts: PushOptions = {}): Promise<PushResult> {
  if (!Buffer.from(module.subarray(0, 4)).equals(Buffer.from([0, 0x61, 0x73, 0x6d]))) {
    throw nodeletError('NDL_IMAGE_FORMAT', 'the file is not a WebAssembly module (no \\0asm header)');
  }
  const client = new RegistryClient(opts);
  const t: RepositoryTarget = { host: registryHostOf(ref), repository: ref.path, credential: opts.credential, signal: opts.signal };
  const pusher = new Pusher(client, t, opts);
  // No `created`: the same module always gives the same manifest digest. A component
  // (layer byte 1 after the version: 00 61 73 6d 0d 00 01 00) is `wasip2`, as wkg writes it.
  const os = module[6] === 1 && module[7] === 0 ? 'wasip2' : 'wasip1';
  const config = Buffer.from(JSON.stringify({ architecture: 'wasm', os, layerDigests: [sha256(module)] }));
  const configDesc = await pusher.blob(WASM_CONFIG_TYPE, config);
  const layer = await pusher.blob(WASM_LAYER_TYPE, module);
  const manifest = Buffer.from(
    JSON.stringify({
      schemaVersion: 2,
      mediaType: OCI_MANIFEST,
      artifactType: WASM_CONFIG_TYPE,
      config: configDesc,
      layers: [layer],
      ...(opts.annotations && { annotations: opts.annotations }),
    }),
  );
  const digest = sha256(manifest);
  if (ref.digest && ref.digest !== digest) {
    throw nodeletError('NDL_IMAGE_DIGEST', `${formatReference(ref)}: the manifest to push has digest ${digest}`);
  }
  const put = await client.pushRequest(t, 'PUT', `manifests/${manifestReferenceOf(ref)}`, { body: manifest, headers: { 'Content-Type': OCI_MANIFEST } });
  await discardBody(put.body);
  const answered = headerOf(put, 'docker-content-digest');
  if (answered && answered !== digest) throw nodeletError('NDL_IMAGE_DIGEST', `registry stored the manifest as ${answered}, expected ${digest}`);
  return { imageID: `${repositoryOf(ref)}@${digest}`, digest, moduleDigest: layer.digest, size: module.length, skipped: pusher.skipped };
}
