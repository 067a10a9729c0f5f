/**
 * Pushing "compat" OCI images (the format runwasi-based runtimes accept): an
 * OCI image config whose `config.Entrypoint[0]` names the module, and tar
 * layers made by the real GNU tar (optionally gzipped) holding it.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { pushImage, type PushAuth, type Pushed } from './oci-push.ts';

export const OCI_IMAGE_CONFIG = 'application/vnd.oci.image.config.v1+json';
export const OCI_LAYER_TAR = 'application/vnd.oci.image.layer.v1.tar';
export const OCI_LAYER_TAR_GZIP = 'application/vnd.oci.image.layer.v1.tar+gzip';

/** A file tree for one layer: path → content, or `{ symlink }`. */
export type LayerFiles = Record<string, string | Uint8Array | { symlink: string }>;

/** Makes a tar archive of `files` with GNU tar in the given format (`pax`, `ustar`, `gnu`). */
export function makeTar(files: LayerFiles, format: 'pax' | 'ustar' | 'gnu' = 'pax'): Buffer {
  const dir = mkdtempSync(join(tmpdir(), 'nodelet-tar-'));
  try {
    for (const [path, content] of Object.entries(files)) {
      const full = join(dir, path);
      mkdirSync(dirname(full), { recursive: true });
      if (typeof content === 'object' && 'symlink' in content) symlinkSync(content.symlink, full);
      else writeFileSync(full, content);
    }
    return execFileSync('tar', [`--format=${format}`, '--sort=name', '--owner=0', '--group=0', '-C', dir, '-cf', '-', '.'], { maxBuffer: 1 << 30 });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Options of {@link pushCompatImage}. */
export interface CompatOptions {
  /** Where the module lives in the image (default `/app.wasm`). */
  readonly entrypoint?: string;
  /** Gzip the layers (default true). */
  readonly gzip?: boolean;
  /** Layers below the module's layer. */
  readonly lowerLayers?: LayerFiles[];
  /** Files beside the module in its layer. */
  readonly extraFiles?: LayerFiles;
  readonly format?: 'pax' | 'ustar' | 'gnu';
  /** The config's `config` object (default `{ Entrypoint: [entrypoint] }`). */
  readonly imageConfig?: Record<string, unknown>;
  readonly auth?: PushAuth;
}

/** Pushes `module` as a compat OCI image; returns the manifest digest and layers. */
export async function pushCompatImage(host: string, repo: string, tag: string, module: Uint8Array, opts: CompatOptions = {}): Promise<Pushed> {
  const entrypoint = opts.entrypoint ?? '/app.wasm';
  const tars = [...(opts.lowerLayers ?? []), { ...opts.extraFiles, [entrypoint.replace(/^\/+/, '')]: module }].map((f) => makeTar(f, opts.format));
  const gzip = opts.gzip ?? true;
  const config = {
    created: '2026-01-01T00:00:00Z',
    architecture: 'wasm',
    os: 'wasip1',
    config: opts.imageConfig ?? { Entrypoint: [entrypoint] },
    rootfs: { type: 'layers', diff_ids: tars.map((t) => `sha256:${createHash('sha256').update(t).digest('hex')}`) },
  };
  const layers = tars.map((t) => ({ mediaType: gzip ? OCI_LAYER_TAR_GZIP : OCI_LAYER_TAR, bytes: gzip ? gzipSync(t) : t }));
  return pushImage(host, repo, tag, { mediaType: OCI_IMAGE_CONFIG, bytes: Buffer.from(JSON.stringify(config)) }, layers, { auth: opts.auth });
}

/** How {@link rawTarEntry} writes one header (for hostile layers GNU tar will not make). */
export interface RawEntryOptions {
  /** Type flag: `0` file (default), `2` symlink, `5` directory, `L` GNU long name. */
  readonly type?: string;
  readonly linkName?: string;
  /** The size written in the header (default: the body's length). */
  readonly size?: number;
  /** Write the size as GNU base-256 (`0x80` then big-endian bytes) instead of octal. */
  readonly base256?: bigint;
  /** Store a wrong header checksum. */
  readonly badChecksum?: boolean;
}

/** One ustar header block followed by `body` padded to 512 bytes. */
export function rawTarEntry(name: string, body: Uint8Array = Buffer.alloc(0), o: RawEntryOptions = {}): Buffer {
  const h = Buffer.alloc(512);
  h.write(name.slice(0, 100), 0, 'utf8');
  h.write('0000644\0', 100, 'ascii');
  h.write('0000000\0', 108, 'ascii');
  h.write('0000000\0', 116, 'ascii');
  if (o.base256 !== undefined) {
    h[124] = 0x80;
    let v = o.base256;
    for (let i = 135; i > 124; i--) {
      h[i] = Number(v & 0xffn);
      v >>= 8n;
    }
  } else h.write(`${(o.size ?? body.length).toString(8).padStart(11, '0')}\0`, 124, 'ascii');
  h.write('00000000000\0', 136, 'ascii');
  h.write(o.type ?? '0', 156, 'ascii');
  if (o.linkName) h.write(o.linkName, 157, 'utf8');
  h.write('ustar\0', 257, 'ascii');
  h.write('00', 263, 'ascii');
  h.fill(0x20, 148, 156);
  let sum = 0;
  for (const b of h) sum += b;
  if (o.badChecksum) sum += 1;
  h.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148, 'ascii');
  const pad = (512 - (body.length % 512)) % 512;
  return Buffer.concat([h, body, Buffer.alloc(pad)]);
}

/** Pushes a compat image whose single layer is `tar` as given (optionally gzipped). */
export async function pushRawCompatImage(
  host: string,
  repo: string,
  tag: string,
  tar: Buffer,
  opts: { gzip?: boolean; entrypoint?: string } = {},
): Promise<Pushed> {
  const gzip = opts.gzip ?? false;
  const config = {
    created: '2026-01-01T00:00:00Z',
    architecture: 'wasm',
    os: 'wasip1',
    config: { Entrypoint: [opts.entrypoint ?? '/app.wasm'] },
    rootfs: { type: 'layers', diff_ids: [`sha256:${createHash('sha256').update(tar).digest('hex')}`] },
  };
  const layer = { mediaType: gzip ? OCI_LAYER_TAR_GZIP : OCI_LAYER_TAR, bytes: gzip ? gzipSync(tar) : tar };
  return pushImage(host, repo, tag, { mediaType: OCI_IMAGE_CONFIG, bytes: Buffer.from(JSON.stringify(config)) }, [layer]);
}
