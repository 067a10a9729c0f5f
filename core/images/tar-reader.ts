/**
 * Finds one regular file in a (ustar, pax or GNU) tar stream and keeps only its
 * content — enough for "compat" OCI images, whose layer holds the module named by
 * the image config's entrypoint. Parsing is tar-stream's (header checksums,
 * octal and base-256 numbers, pax / GNU long names capped at 4 MiB); nodelet's
 * own checks sit on top:
 *
 *   - names are cleaned like a layer extraction would (`./a//b` = `a/b`), and a
 *     name whose `..` climbs above the layer root is refused (a breakout);
 *   - the wanted file must be a regular file, reached through no symlink or
 *     hard link declared in the layer;
 *   - every declared size must be a safe integer; the wanted file's at most `maxBytes`;
 *   - a stream that ends inside an entry is "truncated", naming the entry and its size.
 *
 * The wanted file is spooled to a file in `spoolDir` as it streams (hashed on the
 * way), never held in memory; the caller owns the file it gets back. Feeding never
 * hangs: {@link TarFileFinder.push} resolves once the chunk is taken, or at once
 * when the archive has already failed.
 */
import { createHash, randomBytes } from 'node:crypto';
import { createWriteStream, rmSync } from 'node:fs';
import { join } from 'node:path';
import { extract, type Extract, type ExtractEvents, type Header } from 'tar-stream';
import { nodeletError } from '../errors/index.ts';

/** An entry's body stream as tar-stream hands it out. */
type Source = ExtractEvents['entry'][1];

/** `./a/b`, `/a/b` and `a/b/` all name `a/b`; `a/x/../b` names `a/b`. Undefined when `..` leaves the root. */
function normaliseTarPath(p: string): string | undefined {
  const out: string[] = [];
  for (const c of p.split('/')) {
    if (c === '' || c === '.') continue;
    if (c === '..') {
      if (out.length === 0) return undefined;
      out.pop();
    } else out.push(c);
  }
  return out.join('/');
}

/** What {@link TarFileFinder.end} reports. */
export type TarFind =
  | { readonly found: true; /** The spooled copy (the caller removes it). */ readonly path: string; readonly size: number; readonly digest: string }
  | { readonly found: false; readonly reason: string; /** A whiteout deleted it: lower layers must not be searched. */ readonly deleted?: boolean };

const formatError = (detail: string) => nodeletError('NDL_IMAGE_FORMAT', detail);

/** tar-stream's own messages, said the way a pull error should read. */
function describe(e: Error): string {
  if (/Invalid tar header\. Maybe/.test(e.message)) return 'layer is not a tar archive (bad header checksum)';
  if (/unknown format/.test(e.message)) return 'layer is not a tar archive (unknown header format)';
  if (/Header exceeds max size/.test(e.message)) return 'a tar long-name or pax header exceeds 4 MiB';
  if (/Invalid header/.test(e.message)) return 'a tar entry has an invalid size';
  return `tar archive cannot be read: ${e.message}`;
}

/**
 * Feed it the tar stream chunk by chunk ({@link push}), then {@link end}: it
 * spools the file named `wanted` (at most `maxBytes`) into `spoolDir` and skips
 * everything else without buffering it.
 */
export class TarFileFinder {
  private readonly wanted: string;
  private readonly whiteout: string;
  private readonly parents: string[];
  private readonly x: Extract;
  private readonly closed: Promise<void>;
  /** Parent directories of the wanted file that the layer declares as links (name → what they are). */
  private readonly linkedParents = new Map<string, string>();
  private deleted = false;
  private found?: { path: string; size: number; digest: string };
  /** Every file spooled (earlier copies of the wanted file included), for clean-up. */
  private readonly spooled: string[] = [];
  private problem?: string;
  /** Why the archive cannot be read (thrown by {@link end}). */
  private failure?: Error;
  private truncated = false;
  /** The entry being read, for a "truncated" reason. */
  private current?: { name: string; size: number };

  constructor(
    wanted: string,
    private readonly maxBytes: number,
    private readonly spoolDir: string,
  ) {
    this.wanted = normaliseTarPath(wanted) ?? '';
    const slash = this.wanted.lastIndexOf('/');
    this.whiteout = `${this.wanted.slice(0, slash + 1)}.wh.${this.wanted.slice(slash + 1)}`;
    const parts = this.wanted.split('/');
    this.parents = parts.slice(0, -1).map((_, i) => parts.slice(0, i + 1).join('/'));
    this.x = extract();
    this.x.on('entry', (h, body, next) => this.entry(h, body, next));
    this.closed = new Promise((resolve) => {
      this.x.on('error', (e: Error) => this.fail(e));
      this.x.on('close', () => resolve());
    });
  }

  /** Consumes one chunk of the (uncompressed) tar stream; waits while the parser is full. */
  async push(chunk: Buffer): Promise<void> {
    if (this.x.destroyed || this.failure) return;
    if (this.x.write(chunk)) return;
    await new Promise<void>((resolve) => {
      const done = () => {
        this.x.off('drain', done);
        this.x.off('close', done);
        resolve();
      };
      this.x.on('drain', done);
      this.x.on('close', done);
    });
  }

  /** Call once the stream has ended; throws `NDL_IMAGE_FORMAT` for an archive that cannot be read. */
  async end(): Promise<TarFind> {
    if (!this.x.destroyed) this.x.end(undefined);
    await this.closed;
    const keep = !this.failure && !this.truncated ? this.found?.path : undefined;
    for (const p of this.spooled) if (p !== keep) rmSync(p, { force: true });
    if (this.failure) throw this.failure;
    if (this.truncated) {
      const c = this.current;
      return { found: false, reason: c ? `the tar archive is truncated (entry "${c.name}" declares ${c.size} bytes)` : 'the tar archive is truncated' };
    }
    if (this.found) return { found: true, ...this.found };
    if (this.deleted) return { found: false, reason: `"${this.wanted}" is deleted by a whiteout`, deleted: true };
    return { found: false, reason: this.problem ?? `"${this.wanted}" is not in the layer` };
  }

  private fail(e: Error): void {
    if (this.failure || this.truncated) return;
    if (/Unexpected end of data/.test(e.message)) this.truncated = true;
    else this.failure = e.name === 'NodeletError' ? e : formatError(describe(e));
  }

  private entry(h: Header, body: Source, next: (e?: Error | null) => void): void {
    const size = h.size ?? 0;
    const name = normaliseTarPath(h.name);
    this.current = { name: h.name, size };
    let keep = false;
    body.on('error', () => undefined);
    try {
      if (name === undefined) throw formatError(`tar entry "${h.name}" climbs out of the layer root with ".."`);
      if (!Number.isSafeInteger(size) || size < 0) throw formatError(`tar entry "${h.name}" declares an invalid size`);
      keep = this.inspect(name, h, size);
    } catch (e) {
      this.fail(e as Error);
      this.x.destroy();
      return;
    }
    if (!keep) {
      body.resume();
      body.on('end', () => {
        this.current = undefined;
        next();
      });
      return;
    }
    this.spool(body, next);
  }

  /** Streams the wanted entry's body into a new file of `spoolDir`, hashing it; pauses the parser while the disk catches up. */
  private spool(body: Source, next: (e?: Error | null) => void): void {
    const path = join(this.spoolDir, `tar-entry.${randomBytes(6).toString('hex')}`);
    this.spooled.push(path);
    const out = createWriteStream(path, { mode: 0o600 });
    const hash = createHash('sha256');
    let size = 0;
    let ended = false;
    out.on('error', (e) => {
      this.fail(e);
      this.x.destroy();
    });
    // A body cut short (the archive failed or ended) closes the file at once.
    body.on('close', () => {
      if (!ended) out.destroy();
    });
    body.on('data', (c) => {
      const chunk = c as Buffer;
      hash.update(chunk);
      size += chunk.length;
      if (!out.write(chunk)) {
        body.pause();
        out.once('drain', () => body.resume());
      }
    });
    body.on('end', () => {
      ended = true;
      out.end(() => {
        this.found = { path, size, digest: `sha256:${hash.digest('hex')}` };
        this.current = undefined;
        next();
      });
    });
  }

  /** Applies nodelet's checks to one entry; true when its body is the wanted file. */
  private inspect(name: string, h: Header, size: number): boolean {
    if (this.parents.includes(name)) {
      if (h.type === 'symlink' || h.type === 'link') this.linkedParents.set(name, `a ${h.type === 'link' ? 'hard link' : 'symlink'} to "${h.linkname ?? ''}"`);
      else this.linkedParents.delete(name);
    }
    if (name === this.whiteout) this.deleted = true;
    if (name !== this.wanted) return false;
    const through = this.parents.find((p) => this.linkedParents.has(p));
    if (through !== undefined) {
      this.found = undefined;
      this.problem = `"${this.wanted}" goes through "${through}", ${this.linkedParents.get(through)}`;
      return false;
    }
    if (h.type === 'file' || h.type === 'contiguous-file') {
      if (size > this.maxBytes) throw formatError(`"${this.wanted}" is ${size} bytes, more than the ${this.maxBytes} allowed`);
      this.problem = undefined;
      return true;
    }
    const kind =
      h.type === 'symlink'
        ? `a symlink to "${h.linkname ?? ''}"`
        : h.type === 'link'
          ? `a hard link to "${h.linkname ?? ''}"`
          : h.type === 'directory'
            ? 'a directory'
            : `a tar entry of type "${h.type ?? 'unknown'}"`;
    this.found = undefined;
    this.problem = `"${this.wanted}" is ${kind}, not a regular file`;
    return false;
  }
}
