/**
 * The content-addressed image store under `<rootDir>/images/`:
 *
 *   images/blobs/sha256/<hex>   verified blobs (modules), never modified once renamed in
 *   images/tmp/                 downloads in progress (emptied at open)
 *   images/index.json           reference → image entry (manifest digest, module layer)
 *
 * The index and the set of present blobs are loaded once by {@link ImageStore.open} and kept
 * in memory, so looking up a cached image does no disk I/O. A blob is streamed to a temp
 * file while its sha256 and size are checked, then renamed into place; a mismatch deletes
 * the temp file and fails with `NDL_IMAGE_DIGEST`. Image GC deletes whole blobs
 * (see image-gc.ts); the store tracks when each was last used.
 */
import { createHash, randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { nodeletError } from '../errors/index.ts';
import { SingleFlight } from './single-flight.ts';

/** What the store remembers about one pulled image. */
export interface ImageEntry {
  /** `domain/path` (`127.0.0.1:5000/hello`). */
  readonly repository: string;
  /** Digest of the manifest the reference resolved to (the index's, for an index). */
  readonly digest: string;
  /** Digest, media type and size of the runnable layer. */
  readonly layerDigest: string;
  readonly layerMediaType: string;
  readonly size: number;
  /** Further blobs the image needs (a Spin application's component and file layers); the image is usable only while all are present. */
  readonly blobs?: readonly string[];
}

interface IndexFile {
  version: 1;
  references: Record<string, ImageEntry>;
}

const HEX_RE = /^[0-9a-f]{64}$/;

function hexOf(digest: string): string {
  const hex = digest.startsWith('sha256:') ? digest.slice(7) : '';
  if (!HEX_RE.test(hex)) throw nodeletError('NDL_IMAGE_DIGEST', `unsupported digest "${digest}"`);
  return hex;
}

function isEntry(e: unknown): e is ImageEntry {
  const o = e as Record<string, unknown> | null;
  return (
    typeof o === 'object' &&
    o !== null &&
    typeof o.repository === 'string' &&
    typeof o.digest === 'string' &&
    typeof o.layerDigest === 'string' &&
    /^sha256:[0-9a-f]{64}$/.test(o.layerDigest) &&
    typeof o.layerMediaType === 'string' &&
    typeof o.size === 'number' &&
    (o.blobs === undefined || (Array.isArray(o.blobs) && o.blobs.every((d) => typeof d === 'string' && /^sha256:[0-9a-f]{64}$/.test(d))))
  );
}

/** Counts and hashes bytes passing through; fails as soon as more than `limit` arrive. */
function verifier(digest: string, limit: number | undefined) {
  const hash = createHash('sha256');
  let size = 0;
  const stream = new Transform({
    transform(chunk: Buffer, _enc, done) {
      size += chunk.length;
      if (limit !== undefined && size > limit) return done(nodeletError('NDL_IMAGE_DIGEST', `blob ${digest} is larger than its declared ${limit} bytes`));
      hash.update(chunk);
      done(null, chunk);
    },
  });
  return { stream, result: () => ({ size, digest: `sha256:${hash.digest('hex')}` }) };
}

/** A content-addressed blob store plus the reference index. */
export class ImageStore {
  private readonly blobs = new Set<string>();
  /** When each blob was last used (pulled, found cached, or in use at a GC pass); ms since the epoch. */
  private readonly lastUsed = new Map<string, number>();
  private readonly references = new Map<string, ImageEntry>();
  private readonly downloads = new SingleFlight<string>();
  private indexWrite: Promise<void> = Promise.resolve();

  private constructor(readonly dir: string) {}

  /** Scratch space on the store's filesystem (emptied at open), for downloads and extractions in progress. */
  get tmpDir(): string {
    return join(this.dir, 'tmp');
  }

  /** Opens (creating if needed) the store under `<rootDir>/images`, loading the index and blob list once. */
  static async open(rootDir: string): Promise<ImageStore> {
    const store = new ImageStore(join(rootDir, 'images'));
    await store.load();
    return store;
  }

  private get blobDir(): string {
    return join(this.dir, 'blobs', 'sha256');
  }

  private async load(): Promise<void> {
    await rm(join(this.dir, 'tmp'), { recursive: true, force: true });
    await mkdir(join(this.dir, 'tmp'), { recursive: true });
    await mkdir(this.blobDir, { recursive: true });
    for (const name of await readdir(this.blobDir)) {
      if (!HEX_RE.test(name)) continue;
      this.blobs.add(`sha256:${name}`);
      // Until used again, a blob counts as last used when it was written.
      this.lastUsed.set(`sha256:${name}`, (await stat(join(this.blobDir, name)).catch(() => undefined))?.mtimeMs ?? 0);
    }
    for (const [ref, entry] of Object.entries(await this.readIndex())) {
      if (isEntry(entry) && this.complete(entry)) this.references.set(ref, entry);
    }
  }

  /** The index's references; a corrupt index is moved aside (the blobs stay, a pull re-records). */
  private async readIndex(): Promise<Record<string, unknown>> {
    const path = join(this.dir, 'index.json');
    const text = await readFile(path, 'utf8').catch(() => undefined);
    if (text === undefined) return {};
    try {
      const refs = (JSON.parse(text) as Partial<IndexFile>).references;
      if (typeof refs === 'object' && refs !== null) return refs;
    } catch {
      // fall through: corrupt
    }
    await rename(path, `${path}.corrupt`).catch(() => undefined);
    return {};
  }

  /** Path of a blob (present or not). */
  blobPath(digest: string): string {
    return join(this.blobDir, hexOf(digest));
  }

  /** True when a verified blob is present (memory only). */
  hasBlob(digest: string): boolean {
    return this.blobs.has(digest);
  }

  /** True when every blob of the entry is present. */
  private complete(entry: ImageEntry): boolean {
    return this.blobs.has(entry.layerDigest) && (entry.blobs ?? []).every((d) => this.blobs.has(d));
  }

  /** The entry recorded for a reference key, if its blobs are present (memory only). */
  lookup(key: string): ImageEntry | undefined {
    const entry = this.references.get(key);
    return entry && this.complete(entry) ? entry : undefined;
  }

  /** Every reference key with its entry. */
  entries(): [string, ImageEntry][] {
    return [...this.references].filter(([, e]) => this.complete(e));
  }

  /**
   * Makes sure a blob is present: concurrent callers for one digest share one
   * download. `open` gives the body to stream; the result is the blob's path.
   */
  ensureBlob(digest: string, size: number | undefined, open: (signal: AbortSignal) => Promise<Readable>, signal?: AbortSignal): Promise<string> {
    const path = this.blobPath(digest);
    if (this.blobs.has(digest)) return Promise.resolve(path);
    return this.downloads.do(
      digest,
      async (sig) => {
        await this.writeBlob(digest, size, await open(sig), sig);
        return path;
      },
      signal,
    );
  }

  /** Streams `source` into the store, verifying digest and (when given) size. */
  async writeBlob(digest: string, size: number | undefined, source: Readable, signal?: AbortSignal): Promise<string> {
    const path = this.blobPath(digest);
    const tmp = join(this.dir, 'tmp', `${hexOf(digest)}.${randomBytes(6).toString('hex')}`);
    const check = verifier(digest, size);
    try {
      await pipeline(source, check.stream, createWriteStream(tmp, { mode: 0o644 }), { signal });
      const got = check.result();
      if (got.digest !== digest) throw nodeletError('NDL_IMAGE_DIGEST', `blob ${digest}: received content has digest ${got.digest}`);
      if (size !== undefined && got.size !== size) throw nodeletError('NDL_IMAGE_DIGEST', `blob ${digest}: received ${got.size} bytes, expected ${size}`);
      await rename(tmp, path);
    } catch (e) {
      await rm(tmp, { force: true });
      throw e;
    }
    this.blobs.add(digest);
    this.lastUsed.set(digest, Date.now());
    return path;
  }

  /** Records that a blob was used now (memory only). */
  touch(digest: string, now = Date.now()): void {
    if (this.blobs.has(digest)) this.lastUsed.set(digest, now);
  }

  /** Every present blob with its last use (ms since the epoch). */
  blobUsage(): { digest: string; lastUsed: number }[] {
    return [...this.blobs].map((digest) => ({ digest, lastUsed: this.lastUsed.get(digest) ?? 0 }));
  }

  /**
   * Deletes a blob and forgets every reference to it (persisting the index);
   * returns the bytes freed (0 when it was already gone).
   */
  async removeBlob(digest: string): Promise<number> {
    if (!this.blobs.has(digest)) return 0;
    const path = this.blobPath(digest);
    const size = (await stat(path).catch(() => undefined))?.size ?? 0;
    this.blobs.delete(digest);
    this.lastUsed.delete(digest);
    await rm(path, { force: true });
    const dropped = [...this.references].filter(([, e]) => e.layerDigest === digest || e.blobs?.includes(digest)).map(([k]) => k);
    for (const k of dropped) this.references.delete(k);
    await this.persist();
    return size;
  }

  /** Records `keys` → `entry` in memory and persists the index (writes are serialised). */
  record(keys: readonly string[], entry: ImageEntry): Promise<void> {
    for (const key of keys) this.references.set(key, entry);
    return this.persist();
  }

  /** Writes the index (serialised with other writes). */
  private persist(): Promise<void> {
    const write = async () => {
      const file: IndexFile = { version: 1, references: Object.fromEntries(this.references) };
      const tmp = join(this.dir, 'tmp', `index.${randomBytes(6).toString('hex')}.json`);
      try {
        await writeFile(tmp, JSON.stringify(file, null, 1));
        await rename(tmp, join(this.dir, 'index.json'));
      } catch (e) {
        // A full disk: the index stays the previous one, and no part of this one is left.
        await rm(tmp, { force: true }).catch(() => undefined);
        throw e;
      }
    };
    this.indexWrite = this.indexWrite.then(write, write);
    return this.indexWrite;
  }
}
