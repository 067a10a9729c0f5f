/**
 * "Compat" OCI images, the format runwasi-based runtimes accept: an ordinary
 * OCI image (config `application/vnd.oci.image.config.v1+json`, tar or
 * tar+gzip layers) whose filesystem holds the module named by the config's
 * entrypoint (`config.Entrypoint[0]`, else `config.Cmd[0]`).
 *
 *   config blob ─▶ entrypoint ─▶ layers top-down: stream ─▶ sha256 check ─▶ [gunzip] ─▶ tar ─▶ the file
 *                                 (a whiteout of the file stops the search)
 *   ─▶ must start with \0asm ─▶ stored as a blob under the module's own digest
 */
import { createHash } from 'node:crypto';
import { open, rm } from 'node:fs/promises';
import type { Readable } from 'node:stream';
import { createGunzip } from 'node:zlib';
import { isNodeletError, nodeletError } from '../errors/index.ts';
import type { Descriptor, ParsedManifest } from './manifest.ts';
import { TarFileFinder, type TarFind } from './tar-reader.ts';
import { writable } from './writable.ts';

export const OCI_IMAGE_CONFIG = 'application/vnd.oci.image.config.v1+json';
export const OCI_LAYER_TAR = 'application/vnd.oci.image.layer.v1.tar';
export const OCI_LAYER_TAR_GZIP = 'application/vnd.oci.image.layer.v1.tar+gzip';
/** The media type a module extracted from a compat image is recorded with. */
export const EXTRACTED_MODULE_TYPE = 'application/wasm';

const MAX_CONFIG_BYTES = 1 << 20;
/** Largest module nodelet extracts from a layer. */
const MAX_MODULE_BYTES = 512 << 20;
const WASM_MAGIC = Buffer.from([0x00, 0x61, 0x73, 0x6d]);

const formatError = (detail: string) => nodeletError('NDL_IMAGE_FORMAT', detail);

/** True for an OCI image manifest with an image config and only tar / tar+gzip layers. */
export function isCompatImage(m: ParsedManifest & { kind: 'manifest' }): boolean {
  return (
    m.config?.mediaType === OCI_IMAGE_CONFIG &&
    m.layers.length > 0 &&
    m.layers.every((l) => l.mediaType === OCI_LAYER_TAR || l.mediaType === OCI_LAYER_TAR_GZIP)
  );
}

/** The module path of an image config: `config.Entrypoint[0]`, else `config.Cmd[0]`. */
export function entrypointOf(configBytes: Uint8Array): string {
  let cfg: { config?: { Entrypoint?: unknown; Cmd?: unknown } };
  try {
    cfg = JSON.parse(Buffer.from(configBytes).toString('utf8'));
  } catch {
    throw formatError('image config is not JSON');
  }
  const first = (v: unknown) => (Array.isArray(v) && typeof v[0] === 'string' && v[0] !== '' ? v[0] : undefined);
  const path = first(cfg?.config?.Entrypoint) ?? first(cfg?.config?.Cmd);
  if (!path) throw formatError('image config has no entrypoint (config.Entrypoint or config.Cmd) naming the module');
  return path;
}

/** Checks bytes against a descriptor's digest and size. */
export function verifyBytes(d: Descriptor, bytes: Uint8Array, what: string): void {
  const got = `sha256:${createHash('sha256').update(bytes).digest('hex')}`;
  if (got !== d.digest) throw nodeletError('NDL_IMAGE_DIGEST', `${what} ${d.digest}: received content has digest ${got}`);
  if (bytes.length !== d.size) throw nodeletError('NDL_IMAGE_DIGEST', `${what} ${d.digest}: received ${bytes.length} bytes, expected ${d.size}`);
}

/** Reads a small blob fully (at most `max` bytes). */
export async function readSmall(body: Readable, max = MAX_CONFIG_BYTES): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const c of body) {
    size += (c as Buffer).length;
    if (size > max) throw formatError(`blob exceeds ${max} bytes`);
    chunks.push(c as Buffer);
  }
  return Buffer.concat(chunks);
}

/**
 * Streams one layer, verifying its digest and size, and looks for `wanted`
 * in its tar. A layer that does not decode is still read to its end, so a
 * tampered blob is reported as a digest mismatch rather than as bad gzip.
 * The file counts only once the whole layer has been verified.
 */
async function findInLayer(layer: Descriptor, body: Readable, wanted: string, spoolDir: string): Promise<TarFind> {
  const hash = createHash('sha256');
  let size = 0;
  let decodeError: unknown;
  const finder = new TarFileFinder(wanted, MAX_MODULE_BYTES, spoolDir);
  const gunzip = layer.mediaType === OCI_LAYER_TAR_GZIP ? createGunzip() : undefined;
  // The gunzip output feeds the tar reader with back-pressure; a gzip error stops only the decoding.
  const decoded =
    gunzip &&
    (async () => {
      try {
        for await (const c of gunzip) await finder.push(c as Buffer);
      } catch (e) {
        decodeError ??= e;
      }
    })();
  for await (const c of body) {
    const chunk = c as Buffer;
    size += chunk.length;
    if (size > layer.size) {
      gunzip?.destroy();
      throw nodeletError('NDL_IMAGE_DIGEST', `blob ${layer.digest} is larger than its declared ${layer.size} bytes`);
    }
    hash.update(chunk);
    if (!gunzip) await finder.push(chunk);
    else if (!gunzip.destroyed && !gunzip.write(chunk)) await writable(gunzip);
  }
  if (gunzip) {
    if (!gunzip.destroyed) gunzip.end();
    await decoded;
  }
  let found: TarFind | undefined;
  try {
    found = await finder.end();
  } catch (e) {
    decodeError ??= e;
  }
  const got = `sha256:${hash.digest('hex')}`;
  if (got !== layer.digest) throw nodeletError('NDL_IMAGE_DIGEST', `blob ${layer.digest}: received content has digest ${got}`);
  if (size !== layer.size) throw nodeletError('NDL_IMAGE_DIGEST', `blob ${layer.digest}: received ${size} bytes, expected ${layer.size}`);
  if (decodeError !== undefined || !found) {
    if (isNodeletError(decodeError)) throw decodeError;
    throw formatError(`layer ${layer.digest} cannot be read as ${layer.mediaType}: ${(decodeError as Error).message}`);
  }
  return found;
}

/** A module extracted from a compat image: spooled to `path` (the caller removes it). */
export interface ExtractedModule {
  readonly path: string;
  readonly size: number;
  readonly digest: string;
}

/** The first bytes of a file. */
async function head(path: string, n: number): Promise<Buffer> {
  const fh = await open(path, 'r');
  try {
    const buf = Buffer.alloc(n);
    const { bytesRead } = await fh.read(buf, 0, n, 0);
    return buf.subarray(0, bytesRead);
  } finally {
    await fh.close();
  }
}

/**
 * Finds the module in the layers (top layer first). `open` fetches a layer blob
 * (its request carries the pull's abort signal);
 * the module is spooled into `spoolDir`, never held in memory.
 * Fails naming the entrypoint when it is absent or not Wasm.
 */
export async function extractModule(
  layers: readonly Descriptor[],
  entrypoint: string,
  open: (d: Descriptor) => Promise<Readable>,
  spoolDir: string,
): Promise<ExtractedModule> {
  let reason = `"${entrypoint}" is not in any layer`;
  for (const layer of [...layers].reverse()) {
    const r = await findInLayer(layer, await open(layer), entrypoint, spoolDir);
    if (r.found) {
      if (!(await head(r.path, 4)).equals(WASM_MAGIC)) {
        await rm(r.path, { force: true });
        throw formatError(`the entrypoint "${entrypoint}" of the image is not a WebAssembly module`);
      }
      return { path: r.path, size: r.size, digest: r.digest };
    }
    if (r.deleted || /not a regular file|truncated|goes through/.test(r.reason)) {
      reason = r.reason;
      break;
    }
  }
  throw formatError(`compat image: the module named by the entrypoint cannot be extracted: ${reason}`);
}
