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
    created: '2026-01-01T00:00:00Z', architecture: 'wasm', os: 'wasip1',
    config: opts.imageConfig ?? { Entrypoint: [entrypoint] },
    rootfs: { type: 'layers', diff_ids: tars.map((t) => `sha256:${createHash('sha256').update(t).digest('hex')}`) },
  };
  const layers = tars.map((t) => ({ mediaType: gzip ? OCI_LAYER_TAR_GZIP : OCI_LAYER_TAR, bytes: gzip ? gzipSync(t) : t }));
  return pushImage(host, repo, tag, { mediaType: OCI_IMAGE_CONFIG, bytes: Buffer.from(JSON.stringify(config)) }, layers, { auth: opts.auth });
}
