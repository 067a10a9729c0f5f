/**
 * Unpacks the layers of an OCI image into one directory, the content of an
 * image volume: layers applied bottom-up as a container runtime makes a root
 * filesystem, with nodelet's own confinement on top. The directory is nodelet's
 * (a fresh temp dir of the image store); nothing outside it is ever written,
 * removed or linked to.
 *
 *   tar entry ─▶ name cleaned (`./a//b` = `a/b`; `..` above the root: refused, NDL_PATH_ESCAPE)
 *     `.wh..wh..opq` in D ─▶ what lower layers put in D goes (this layer's entries stay)
 *     `.wh.<name>`        ─▶ <name> of lower layers goes (a path through a symlink: nothing to do)
 *     otherwise           ─▶ parents made as real dirs; a parent that is a symlink: refused
 *                            (NDL_PATH_ESCAPE), one that is a file: refused (NDL_IMAGE_FORMAT)
 *                            ─▶ what was there replaced ─▶ file | dir | symlink | hard link
 *
 * Symlinks are kept, their target read as if the volume were the root
 * filesystem (an absolute target names a path of the volume; `..` stops at its
 * root, as in a chroot) and written relative to the link: every link resolves
 * inside the volume on the host too, whoever follows it. A hard link must name a
 * file of the volume reached through real directories (a hard link to a symlink
 * becomes a symlink to the same place). Devices and FIFOs are skipped.
 *
 * {@link TreeUnpacker.finish} makes the tree read-only: directories 0555, files
 * 0444 (0555 when the tar gave them an exec bit; no set-id bits), and returns its
 * size (each regular file once, hard links counted once). The root dir itself
 * stays writable until the store has renamed it into place.
 */
import { createWriteStream } from 'node:fs';
import { chmod, link, lstat, mkdir, open, readdir, readlink, rm, symlink } from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { extract, type Extract, type ExtractEvents, type Header } from 'tar-stream';
import { isNodeletError, nodeletError } from '../errors/index.ts';
import { cleanEntryName, confinedLinkTarget, resolveInVolume } from './tree-paths.ts';

/** A tar entry's body as tar-stream hands it out. */
type Entry = ExtractEvents['entry'][1];

/** Resolves once the tar parser takes more, or has closed. */
function drained(x: Extract): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      x.off('drain', done);
      x.off('close', done);
      resolve();
    };
    x.on('drain', done);
    x.on('close', done);
  });
}

/** Writes a new file (never through a link: it must not exist) from a tar entry's body. */
async function writeNew(file: string, body: AsyncIterable<unknown>): Promise<void> {
  const fh = await open(file, 'wx', 0o644);
  try {
    for await (const chunk of body) await fh.write(chunk as Buffer);
  } finally {
    await fh.close();
  }
}

/** The first `n` path components of `p`. */
const prefix = (p: string, n: number) => p.split('/').slice(0, n).join('/');

/** Limits of one unpacking (the caller derives them from the free space of the image filesystem). */
export interface UnpackLimits {
  /** Bytes of file content the whole tree may hold. */
  readonly maxBytes: number;
  /** Entries (files, dirs, links) the whole tree may hold. */
  readonly maxEntries: number;
}

/** Applies image layers, in order, into `root` (an empty directory nodelet made). */
export class TreeUnpacker {
  /** Root-relative paths known to be real directories (made or checked here). */
  private readonly dirs = new Set<string>(['']);
  /** Files whose tar mode had an exec bit. */
  private readonly executables = new Set<string>();
  private bytes = 0;
  private entries = 0;
  /** The layer being applied, for messages. */
  private layer = '';

  constructor(
    readonly root: string,
    private readonly limits: UnpackLimits = { maxBytes: Number.MAX_SAFE_INTEGER, maxEntries: Number.MAX_SAFE_INTEGER },
  ) {}

  /**
   * Applies one layer from its (uncompressed) tar stream. Throws NDL_PATH_ESCAPE for an
   * entry that would leave the root, NDL_IMAGE_FORMAT for anything else it cannot apply.
   */
  async applyLayer(tar: Readable, layer: string): Promise<void> {
    this.layer = layer;
    const added = new Set<string>();
    const x = extract();
    // The parser's own error (a truncated archive) explains an entry body cut short.
    let parseError: unknown;
    x.on('error', (e: unknown) => (parseError ??= e));
    // Settled to its error at once (awaited below): never an unhandled rejection meanwhile.
    const fed = (async () => {
      try {
        for await (const chunk of tar) {
          if (x.destroyed) return;
          if (!x.write(chunk as Buffer)) await drained(x);
        }
        x.end(undefined);
      } catch (e) {
        x.destroy(e as Error);
        throw e;
      }
    })().then(
      () => undefined,
      (e: unknown) => e,
    );
    let failure: unknown;
    try {
      for await (const entry of x) {
        try {
          await this.entry(entry.header, entry, added);
        } finally {
          entry.resume();
        }
      }
    } catch (e) {
      failure = e;
      x.destroy();
      tar.destroy();
    }
    failure ??= await fed;
    if (failure !== undefined) throw this.described(isNodeletError(failure) ? failure : (parseError ?? failure));
  }

  /** Applies one layer that is a single file (an artifact's layer), written at `name` (root-relative). */
  async addFile(body: Readable, name: string, size: number, layer: string): Promise<void> {
    this.layer = layer;
    const clean = cleanEntryName(name);
    if (clean === undefined || clean === '') throw this.escape(`the file name ${JSON.stringify(name)} of layer ${layer} leaves the volume root`);
    const added = new Set<string>();
    await this.parents(clean, name, added);
    if (await lstat(this.full(clean)).catch(() => undefined)) throw this.format(`two layers are named ${JSON.stringify(clean)}`);
    this.count(size);
    await pipeline(body, createWriteStream(this.full(clean), { flags: 'wx', mode: 0o644 }));
  }

  /** Makes the tree read-only and returns its size in bytes (regular files, each inode once). */
  async finish(): Promise<number> {
    const seen = new Set<number>();
    let size = 0;
    const walk = async (rel: string): Promise<void> => {
      for (const name of await readdir(this.full(rel))) {
        const child = rel === '' ? name : `${rel}/${name}`;
        const st = await lstat(this.full(child));
        if (st.isDirectory()) {
          await walk(child);
          await chmod(this.full(child), 0o555);
        } else if (st.isFile()) {
          if (!seen.has(st.ino)) {
            seen.add(st.ino);
            size += st.size;
          }
          await chmod(this.full(child), this.executables.has(child) ? 0o555 : 0o444);
        }
      }
    };
    await walk('');
    return size;
  }

  private full(rel: string): string {
    return rel === '' ? this.root : path.join(this.root, rel);
  }

  private escape(detail: string) {
    return nodeletError('NDL_PATH_ESCAPE', detail);
  }

  private format(detail: string) {
    return nodeletError('NDL_IMAGE_FORMAT', detail);
  }

  /** A failure said the way a pull error should read. */
  private described(e: unknown): unknown {
    if (isNodeletError(e)) return e;
    const m = (e as Error)?.message ?? String(e);
    if (/Unexpected end of data/.test(m)) return this.format(`layer ${this.layer} is a truncated tar archive`);
    if (/Invalid tar header|unknown format|Invalid header/.test(m)) return this.format(`layer ${this.layer} is not a tar archive (${m})`);
    // A system call's error names a path of the node: only its code is told.
    const sys = e as NodeJS.ErrnoException;
    return this.format(`layer ${this.layer} cannot be unpacked: ${sys?.syscall ? `${sys.syscall} ${sys.code}` : m}`);
  }

  private count(bytes: number): void {
    this.entries++;
    this.bytes += bytes;
    if (this.bytes > this.limits.maxBytes) throw this.format(`the image's content exceeds the ${this.limits.maxBytes} bytes the image filesystem can take`);
    if (this.entries > this.limits.maxEntries) throw this.format(`the image has more than the ${this.limits.maxEntries} entries the image filesystem can take`);
  }

  /** Forgets what is known of `rel` and below (it was removed or replaced). */
  private forget(rel: string): void {
    for (const d of this.dirs) if (d === rel || d.startsWith(`${rel}/`)) this.dirs.delete(d);
  }

  /** Removes `rel` (a link is removed, never followed) and forgets it. */
  private async remove(rel: string): Promise<void> {
    await rm(this.full(rel), { recursive: true, force: true });
    this.forget(rel);
  }

  /** What `rel`'s parents are: 'ok' (real dirs, all present), 'missing' (one is absent), or the first that is not a dir. */
  private async parentState(rel: string): Promise<'ok' | 'missing' | { at: string; symlink: boolean }> {
    const parts = rel.split('/');
    for (let i = 1; i < parts.length; i++) {
      const p = prefix(rel, i);
      if (this.dirs.has(p)) continue;
      const st = await lstat(this.full(p)).catch(() => undefined);
      if (!st) return 'missing';
      if (!st.isDirectory()) return { at: p, symlink: st.isSymbolicLink() };
      this.dirs.add(p);
    }
    return 'ok';
  }

  /** Makes `rel`'s parents (real dirs only); `name` is the entry's name as written, for messages. */
  private async parents(rel: string, name: string, added: Set<string>): Promise<void> {
    const parts = rel.split('/');
    for (let i = 1; i < parts.length; i++) {
      const p = prefix(rel, i);
      await this.dir(p, name, added, false);
      // A directory this layer writes into is this layer's too (an opaque whiteout keeps it).
      added.add(p);
    }
  }

  /** Makes sure `rel` is a real directory; `replace` (a directory entry): a non-directory there is replaced. */
  private async dir(rel: string, name: string, added: Set<string>, replace: boolean): Promise<void> {
    if (this.dirs.has(rel)) return;
    const st = await lstat(this.full(rel)).catch(() => undefined);
    if (st?.isDirectory()) {
      this.dirs.add(rel);
      return;
    }
    if (st && !replace) {
      if (st.isSymbolicLink()) throw this.escape(`tar entry ${JSON.stringify(name)} of layer ${this.layer} goes through ${JSON.stringify(rel)}, a symlink`);
      throw this.format(`tar entry ${JSON.stringify(name)} of layer ${this.layer} goes through ${JSON.stringify(rel)}, which is not a directory`);
    }
    if (st) await this.remove(rel);
    this.count(0);
    await mkdir(this.full(rel), { mode: 0o755 });
    this.dirs.add(rel);
    added.add(rel);
  }

  private async entry(h: Header, body: Entry, added: Set<string>): Promise<void> {
    const rel = cleanEntryName(h.name);
    if (rel === undefined) throw this.escape(`tar entry ${JSON.stringify(h.name)} of layer ${this.layer} climbs out of the volume root with ".."`);
    if (rel === '') return;
    const base = path.posix.basename(rel);
    const dir = rel.includes('/') ? path.posix.dirname(rel) : '';
    if (base === '.wh..wh..opq') return this.opaque(dir, h.name, added);
    if (base.startsWith('.wh..wh.')) return; // other aufs metadata (`.wh..wh.plnk`): nothing to apply
    if (base.startsWith('.wh.')) {
      const hidden = base.slice(4);
      if (hidden === '' || hidden === '.' || hidden === '..') throw this.format(`whiteout ${JSON.stringify(h.name)} of layer ${this.layer} names no file`);
      return this.whiteout(dir === '' ? hidden : `${dir}/${hidden}`, added);
    }
    await this.parents(rel, h.name, added);
    const full = this.full(rel);
    switch (h.type) {
      case 'directory':
        await this.dir(rel, h.name, added, true);
        break;
      case 'file':
      case 'contiguous-file': {
        const size = h.size ?? 0;
        await this.clear(rel);
        this.count(size);
        if ((h.mode ?? 0) & 0o111) this.executables.add(rel);
        else this.executables.delete(rel);
        await writeNew(full, body);
        break;
      }
      case 'symlink':
        await this.clear(rel);
        this.count(0);
        await symlink(confinedLinkTarget(rel, h.linkname ?? ''), full);
        break;
      case 'link':
        await this.hardLink(rel, h, added);
        break;
      default:
        return; // devices, FIFOs: nothing a volume can hold
    }
    added.add(rel);
  }

  /** Removes whatever is at `rel` before a non-directory entry is written there. */
  private async clear(rel: string): Promise<void> {
    if (await lstat(this.full(rel)).catch(() => undefined)) await this.remove(rel);
  }

  private async hardLink(rel: string, h: Header, added: Set<string>): Promise<void> {
    const name = h.linkname ?? '';
    const source = cleanEntryName(name);
    if (source === undefined || source === '') {
      throw this.escape(`hard link ${JSON.stringify(h.name)} of layer ${this.layer} names ${JSON.stringify(name)}, outside the volume root`);
    }
    const parents = await this.parentState(source);
    if (parents !== 'ok') {
      if (parents !== 'missing' && parents.symlink) {
        throw this.escape(
          `hard link ${JSON.stringify(h.name)} of layer ${this.layer} names ${JSON.stringify(name)}, through ${JSON.stringify(parents.at)}, a symlink`,
        );
      }
      throw this.format(`hard link ${JSON.stringify(h.name)} of layer ${this.layer} names ${JSON.stringify(name)}, which is not in the image`);
    }
    const st = await lstat(this.full(source)).catch(() => undefined);
    if (!st || st.isDirectory()) {
      throw this.format(
        `hard link ${JSON.stringify(h.name)} of layer ${this.layer} names ${JSON.stringify(name)}, which is ${st ? 'a directory' : 'not in the image'}`,
      );
    }
    await this.clear(rel);
    this.count(0);
    if (st.isSymbolicLink()) {
      // The same place as the link it names, written from this link's directory.
      const sourceDir = source.includes('/') ? path.posix.dirname(source) : '';
      await symlink(confinedLinkTarget(rel, `/${resolveInVolume(sourceDir, await readlink(this.full(source)))}`), this.full(rel));
    } else {
      await link(this.full(source), this.full(rel));
      if (this.executables.has(source)) this.executables.add(rel);
    }
    added.add(rel);
  }

  /** `.wh.<name>`: removes what lower layers put at `rel`. */
  private async whiteout(rel: string, added: Set<string>): Promise<void> {
    if (added.has(rel)) return; // a whiteout hides lower layers only
    if ((await this.parentState(rel)) !== 'ok') return; // through a symlink or absent: nothing of the volume is there
    await this.remove(rel);
  }

  /** `.wh..wh..opq` in `dir`: removes what lower layers put in `dir`, keeping this layer's entries. */
  private async opaque(dir: string, name: string, added: Set<string>): Promise<void> {
    await this.parents(dir === '' ? 'x' : `${dir}/x`, name, added);
    const prune = async (rel: string): Promise<void> => {
      for (const child of await readdir(this.full(rel))) {
        const c = rel === '' ? child : `${rel}/${child}`;
        if (!added.has(c)) await this.remove(c);
        else if ((await lstat(this.full(c))).isDirectory()) await prune(c);
      }
    };
    await prune(dir);
  }
}
