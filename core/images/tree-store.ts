/**
 * The unpacked image volumes of the image store, one read-only tree per image
 * digest, shared by every pod that mounts that image:
 *
 *   images/trees/sha256/<hex>/   the content of the image whose manifest (or index) digest is <hex>
 *   images/trees/tmp/            unpackings in progress and trees being removed (emptied at open)
 *   images/trees/index.json      reference → digest, digest → { repository, size }
 *
 * The index and the trees present are loaded once by {@link TreeStore.open} and kept in
 * memory, so a cached image volume costs no disk I/O. A tree on disk without a record (a
 * crash between its rename and the index write) is removed at open; a record without its
 * tree is dropped. A tree is unpacked in `tmp/` and renamed into place whole, so a tree
 * under `sha256/` is always complete. Image GC removes whole trees (see image-gc.ts); the
 * store tracks when each was last used, as for blobs.
 */
import { randomBytes } from 'node:crypto';
import { chmod, lstat, mkdir, mkdtemp, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { nodeletError } from '../errors/index.ts';

/** One unpacked image. */
export interface TreeEntry {
  /** `domain/path` (`127.0.0.1:5000/data`). */
  readonly repository: string;
  /** The manifest (or index) digest the tree was unpacked from. */
  readonly digest: string;
  /** Bytes of file content. */
  readonly size: number;
}

interface IndexFile {
  version: 1;
  trees: Record<string, { repository: string; size: number }>;
  references: Record<string, string>;
}

const DIGEST_RE = /^sha256:[0-9a-f]{64}$/;
const HEX_RE = /^[0-9a-f]{64}$/;

/**
 * Removes a tree nodelet unpacked, read-only directories included (a user other than
 * root cannot remove entries of a 0555 directory): first renamed into `tmpDir` (it is gone
 * from its place at once), then made writable (directories only, never through a link),
 * then removed.
 */
export async function removeUnpackedTree(dir: string, tmpDir: string): Promise<void> {
  const st = await lstat(dir).catch(() => undefined);
  if (!st) return;
  if (!st.isDirectory()) return rm(dir, { force: true });
  await chmod(dir, 0o755);
  const moved = join(tmpDir, `removing.${randomBytes(6).toString('hex')}`);
  await rename(dir, moved);
  const writable = async (d: string): Promise<void> => {
    await chmod(d, 0o755);
    for (const e of await readdir(d, { withFileTypes: true })) if (e.isDirectory()) await writable(join(d, e.name));
  };
  await writable(moved).catch(() => undefined);
  await rm(moved, { recursive: true, force: true });
}

/** The unpacked trees plus their reference index. */
export class TreeStore {
  private readonly trees = new Map<string, { repository: string; size: number }>();
  private readonly references = new Map<string, string>();
  /** When each tree was last used (pulled, found cached, held by a pod at a GC pass); ms since the epoch. */
  private readonly lastUsed = new Map<string, number>();
  private indexWrite: Promise<void> = Promise.resolve();

  private constructor(readonly dir: string) {}

  /** Opens (creating if needed) `<imagesDir>/trees`, loading its index once and emptying its `tmp/`. */
  static async open(imagesDir: string): Promise<TreeStore> {
    const store = new TreeStore(join(imagesDir, 'trees'));
    await store.load();
    return store;
  }

  /** Scratch space on the store's filesystem for unpackings in progress. */
  get tmpDir(): string {
    return join(this.dir, 'tmp');
  }

  private get treeDir(): string {
    return join(this.dir, 'sha256');
  }

  private async load(): Promise<void> {
    await mkdir(this.tmpDir, { recursive: true });
    for (const name of await readdir(this.tmpDir)) await removeUnpackedTree(join(this.tmpDir, name), this.tmpDir).catch(() => undefined);
    await mkdir(this.treeDir, { recursive: true });
    const index = await this.readIndex();
    for (const name of await readdir(this.treeDir)) {
      const digest = `sha256:${name}`;
      const rec = index.trees?.[digest];
      if (!HEX_RE.test(name) || typeof rec?.repository !== 'string' || !Number.isSafeInteger(rec.size)) {
        await removeUnpackedTree(join(this.treeDir, name), this.tmpDir).catch(() => undefined);
        continue;
      }
      this.trees.set(digest, { repository: rec.repository, size: rec.size });
      // Until used again, a tree counts as last used when it was put in place.
      this.lastUsed.set(digest, (await stat(join(this.treeDir, name)).catch(() => undefined))?.mtimeMs ?? 0);
    }
    for (const [key, digest] of Object.entries(index.references ?? {}))
      if (typeof digest === 'string' && this.trees.has(digest)) this.references.set(key, digest);
  }

  private async readIndex(): Promise<Partial<IndexFile>> {
    const path = join(this.dir, 'index.json');
    const text = await readFile(path, 'utf8').catch(() => undefined);
    if (text === undefined) return {};
    try {
      const parsed = JSON.parse(text) as Partial<IndexFile>;
      if (typeof parsed === 'object' && parsed !== null) return parsed;
    } catch {
      // fall through: corrupt
    }
    await rename(path, `${path}.corrupt`).catch(() => undefined);
    return {};
  }

  /** Path of a tree (present or not). */
  path(digest: string): string {
    if (!DIGEST_RE.test(digest)) throw nodeletError('NDL_IMAGE_DIGEST', `unsupported digest "${digest}"`);
    return join(this.treeDir, digest.slice('sha256:'.length));
  }

  /** True when the tree of `digest` is present (memory only). */
  has(digest: string): boolean {
    return this.trees.has(digest);
  }

  /** The tree a reference key resolved to, if present (memory only). */
  lookup(key: string): TreeEntry | undefined {
    const digest = this.references.get(key);
    return digest === undefined ? undefined : this.entry(digest);
  }

  /** The tree of `digest`, if present. */
  entry(digest: string): TreeEntry | undefined {
    const t = this.trees.get(digest);
    return t && { digest, ...t };
  }

  /** Every tree with the reference keys that resolve to it. */
  list(): { entry: TreeEntry; keys: string[] }[] {
    const out = new Map<string, { entry: TreeEntry; keys: string[] }>();
    for (const [digest, t] of this.trees) out.set(digest, { entry: { digest, ...t }, keys: [] });
    for (const [key, digest] of this.references) out.get(digest)?.keys.push(key);
    return [...out.values()];
  }

  /** A new empty directory in `tmp/` to unpack into. */
  scratch(): Promise<string> {
    return mkdtemp(join(this.tmpDir, 'unpack-'));
  }

  /**
   * Puts an unpacked tree in place as `digest` and records it (with `keys`), then makes its
   * root read-only. When the tree is there already (another pull unpacked it meanwhile), `dir` is removed.
   */
  async install(digest: string, dir: string, entry: { repository: string; size: number }, keys: readonly string[]): Promise<void> {
    const target = this.path(digest);
    if (this.trees.has(digest)) {
      await removeUnpackedTree(dir, this.tmpDir);
    } else {
      try {
        await rename(dir, target);
      } catch (e) {
        await removeUnpackedTree(dir, this.tmpDir).catch(() => undefined);
        throw e;
      }
      await chmod(target, 0o555);
      this.trees.set(digest, entry);
    }
    this.lastUsed.set(digest, Date.now());
    await this.record(keys, digest);
  }

  /** Records `keys` → `digest` (a present tree) in memory and persists the index. */
  record(keys: readonly string[], digest: string): Promise<void> {
    for (const key of keys) this.references.set(key, digest);
    return this.persist();
  }

  /** Records that a tree was used now (memory only). */
  touch(digest: string, now = Date.now()): void {
    if (this.trees.has(digest)) this.lastUsed.set(digest, now);
  }

  /** Every tree with its last use (ms since the epoch). */
  usage(): { digest: string; lastUsed: number }[] {
    return [...this.trees.keys()].map((digest) => ({ digest, lastUsed: this.lastUsed.get(digest) ?? 0 }));
  }

  /** Removes a tree and every reference to it (persisting the index); returns its size (0 when it was gone). */
  async remove(digest: string): Promise<number> {
    const t = this.trees.get(digest);
    if (!t) return 0;
    this.trees.delete(digest);
    this.lastUsed.delete(digest);
    for (const [key, d] of this.references) if (d === digest) this.references.delete(key);
    await removeUnpackedTree(this.path(digest), this.tmpDir);
    await this.persist();
    return t.size;
  }

  /** Writes the index (serialised with other writes). */
  private persist(): Promise<void> {
    const write = async () => {
      const file: IndexFile = { version: 1, trees: Object.fromEntries(this.trees), references: Object.fromEntries(this.references) };
      const tmp = join(this.tmpDir, `index.${randomBytes(6).toString('hex')}.json`);
      try {
        await writeFile(tmp, JSON.stringify(file, null, 1));
        await rename(tmp, join(this.dir, 'index.json'));
      } catch (e) {
        await rm(tmp, { force: true }).catch(() => undefined);
        throw e;
      }
    };
    this.indexWrite = this.indexWrite.then(write, write);
    return this.indexWrite;
  }
}
