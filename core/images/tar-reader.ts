/**
 * A small streaming tar reader: finds one regular file in a (ustar, pax or GNU)
 * tar stream and keeps only its bytes. Enough for "compat" OCI images, whose
 * layer holds the module named by the image config's entrypoint.
 *
 *   header ──size>0──▶ body (padded to 512) ──▶ header ... ──two zero blocks──▶ end
 *     │ 'x' pax / 'L' GNU long name: the body names the next entry
 *     └ the wanted name: its body is kept (only the last copy counts, like extraction)
 */
import { nodeletError } from '../errors/catalogue.ts';

const BLOCK = 512;

/** One tar entry header, as far as nodelet needs it. */
interface Header {
  readonly name: string;
  readonly size: number;
  /** `0`/NUL regular file, `5` directory, `2` symlink, `1` hard link, `x`/`g` pax, `L` GNU long name. */
  readonly type: string;
  readonly linkName: string;
}

/** `./a/b`, `/a/b` and `a/b/` all name `a/b`. */
export function normaliseTarPath(p: string): string {
  return p.split('/').filter((c) => c !== '' && c !== '.').join('/');
}

function cString(buf: Buffer, start: number, len: number): string {
  const slice = buf.subarray(start, start + len);
  const nul = slice.indexOf(0);
  return slice.subarray(0, nul < 0 ? len : nul).toString('utf8');
}

/** Octal field, or GNU base-256 when the first byte has its top bit set. */
function numeric(buf: Buffer, start: number, len: number): number {
  if (buf[start]! & 0x80) {
    let n = buf[start]! & 0x7f;
    for (let i = 1; i < len; i++) n = n * 256 + buf[start + i]!;
    return n;
  }
  const text = cString(buf, start, len).trim();
  return text === '' ? 0 : parseInt(text, 8);
}

function checksumOk(block: Buffer): boolean {
  let sum = 0;
  for (let i = 0; i < BLOCK; i++) sum += i >= 148 && i < 156 ? 32 : block[i]!;
  return sum === numeric(block, 148, 8);
}

function parseHeader(block: Buffer): Header {
  if (!checksumOk(block)) throw nodeletError('NDL_IMAGE_FORMAT', 'layer is not a tar archive (bad header checksum)');
  const size = numeric(block, 124, 12);
  if (!Number.isSafeInteger(size) || size < 0) throw nodeletError('NDL_IMAGE_FORMAT', 'tar entry has an invalid size');
  const ustar = cString(block, 257, 6).startsWith('ustar');
  const prefix = ustar ? cString(block, 345, 155) : '';
  const name = cString(block, 0, 100);
  return { name: prefix ? `${prefix}/${name}` : name, size, type: String.fromCharCode(block[156]! || 0x30), linkName: cString(block, 157, 100) };
}

/** The `path` record of a pax extended header body (`<len> path=<value>\n` records). */
function paxPath(body: Buffer): string | undefined {
  let path: string | undefined;
  let i = 0;
  while (i < body.length) {
    const space = body.indexOf(0x20, i);
    if (space < 0) break;
    const len = parseInt(body.subarray(i, space).toString('ascii'), 10);
    if (!(len > 0)) break;
    const record = body.subarray(space + 1, i + len - 1).toString('utf8');
    const eq = record.indexOf('=');
    if (record.slice(0, eq) === 'path') path = record.slice(eq + 1);
    i += len;
  }
  return path;
}

/** What {@link TarFileFinder.result} reports. */
export type TarFind =
  | { readonly found: true; readonly bytes: Buffer }
  | { readonly found: false; readonly reason: string; /** A whiteout deleted it: lower layers must not be searched. */ readonly deleted?: boolean };

/**
 * Feed it the tar stream chunk by chunk; it keeps the bytes of the file named
 * `wanted` (at most `maxBytes`), skipping everything else without buffering it.
 */
export class TarFileFinder {
  private readonly wanted: string;
  private readonly whiteout: string;
  private deleted = false;
  private pending = Buffer.alloc(0);
  /** Bytes of the current entry's body still to come (plus padding). */
  private remaining = 0;
  private padding = 0;
  private current?: Header;
  private chunks: Buffer[] | undefined;
  private metaChunks: Buffer[] | undefined;
  private nextName: string | undefined;
  private ended = false;
  private found?: Buffer;
  private problem?: string;

  constructor(wanted: string, private readonly maxBytes: number) {
    this.wanted = normaliseTarPath(wanted);
    const slash = this.wanted.lastIndexOf('/');
    this.whiteout = `${this.wanted.slice(0, slash + 1)}.wh.${this.wanted.slice(slash + 1)}`;
  }

  /** Consumes one chunk of the (uncompressed) tar stream. */
  push(chunk: Buffer): void {
    let buf = this.pending.length ? Buffer.concat([this.pending, chunk]) : chunk;
    while (!this.ended && buf.length > 0) {
      if (this.remaining > 0) {
        const take = Math.min(this.remaining, buf.length);
        this.body(buf.subarray(0, take));
        this.remaining -= take;
        buf = buf.subarray(take);
        if (this.remaining === 0) this.finishEntry();
        continue;
      }
      if (this.padding > 0) {
        const skip = Math.min(this.padding, buf.length);
        this.padding -= skip;
        buf = buf.subarray(skip);
        continue;
      }
      if (buf.length < BLOCK) break;
      this.header(buf.subarray(0, BLOCK));
      buf = buf.subarray(BLOCK);
    }
    this.pending = this.ended ? Buffer.alloc(0) : Buffer.from(buf);
  }

  private header(block: Buffer): void {
    if (block.every((b) => b === 0)) {
      this.ended = true;
      return;
    }
    const h = parseHeader(block);
    const name = this.nextName ?? h.name;
    this.nextName = undefined;
    this.current = { ...h, name };
    const meta = h.type === 'x' || h.type === 'L';
    const isWanted = !meta && normaliseTarPath(name) === this.wanted;
    this.chunks = undefined;
    this.metaChunks = meta ? [] : undefined;
    if (isWanted) this.onWanted(this.current);
    if (!meta && normaliseTarPath(name) === this.whiteout) this.deleted = true;
    this.remaining = h.size;
    this.padding = (BLOCK - (h.size % BLOCK)) % BLOCK;
    if (h.size === 0) this.finishEntry();
  }

  private onWanted(h: Header): void {
    if (h.type === '0' || h.type === '7') {
      if (h.size > this.maxBytes) throw nodeletError('NDL_IMAGE_FORMAT', `"${this.wanted}" is ${h.size} bytes, more than the ${this.maxBytes} allowed`);
      this.chunks = [];
      this.problem = undefined;
      return;
    }
    const kind = h.type === '2' ? `a symlink to "${h.linkName}"` : h.type === '1' ? `a hard link to "${h.linkName}"` : h.type === '5' ? 'a directory' : `a tar entry of type "${h.type}"`;
    this.found = undefined;
    this.problem = `"${this.wanted}" is ${kind}, not a regular file`;
  }

  private body(part: Buffer): void {
    if (this.chunks) this.chunks.push(Buffer.from(part));
    else if (this.metaChunks) this.metaChunks.push(Buffer.from(part));
  }

  private finishEntry(): void {
    const h = this.current!;
    if (this.metaChunks) {
      const body = Buffer.concat(this.metaChunks);
      this.nextName = h.type === 'L' ? cString(body, 0, body.length) : paxPath(body) ?? this.nextName;
      this.metaChunks = undefined;
    } else if (this.chunks) {
      this.found = Buffer.concat(this.chunks);
      this.chunks = undefined;
    }
  }

  /** Call once the stream has ended. */
  result(): TarFind {
    if (this.remaining > 0 || (this.pending.length > 0 && !this.ended)) return { found: false, reason: 'the tar archive is truncated' };
    if (this.found) return { found: true, bytes: this.found };
    if (this.deleted) return { found: false, reason: `"${this.wanted}" is deleted by a whiteout`, deleted: true };
    return { found: false, reason: this.problem ?? `"${this.wanted}" is not in the layer` };
  }
}
