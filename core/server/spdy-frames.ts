/**
 * SPDY/3.1 framing, the part the kubelet API needs: the kube-apiserver (and
 * client-go) reach `/portForward`, `/attach` and `/exec` over SPDY/3.1
 * (moby/spdystream), also when kubectl talks WebSocket to the apiserver — the
 * apiserver tunnels port-forward and translates exec/attach to SPDY towards
 * kubelets that do not declare WebSocket support.
 *
 * Hand-written (a few hundred lines) rather than `spdy-transport`: that
 * package is unmaintained since 2018, expects HTTP-style `:method`/`:path`
 * headers on every stream and enforces SPDY/3.1 flow-control windows that
 * spdystream never opens (it sends no WINDOW_UPDATE), so larger transfers
 * stall. spdystream, like this module, does no flow control.
 *
 * Frames (all integers big-endian):
 *
 *   control: 1|version(15)=3 · type(16) · flags(8) · length(24) · body
 *   data:    0|stream-id(31)             · flags(8) · length(24) · payload
 *
 * Header blocks (SYN_STREAM, SYN_REPLY, HEADERS) are zlib streams, one per
 * direction and session, primed with the SPDY/3 dictionary: decode them in
 * order through one {@link HeaderInflater}. Encoded blocks here use stored
 * (uncompressed) deflate blocks — valid for any zlib reader and synchronous.
 */
import zlib from 'node:zlib';
import { nodeletError } from '../errors/index.ts';
import { SPDY3_DICTIONARY } from './spdy-dictionary.ts';

/** Control frame types (SPDY/3 section 2.6). */
export const FrameType = {
  SYN_STREAM: 1,
  SYN_REPLY: 2,
  RST_STREAM: 3,
  SETTINGS: 4,
  PING: 6,
  GOAWAY: 7,
  HEADERS: 8,
  WINDOW_UPDATE: 9,
} as const;

/** FLAG_FIN on data frames, SYN_STREAM, SYN_REPLY and HEADERS. */
export const FLAG_FIN = 0x01;
/** RST_STREAM status codes used here. */
export const RstStatus = { PROTOCOL_ERROR: 1, INVALID_STREAM: 2, REFUSED_STREAM: 3, CANCEL: 5, INTERNAL_ERROR: 6 } as const;
/** The largest payload of one frame (24-bit length). */
export const MAX_FRAME_PAYLOAD = 0xffffff;

/** A parsed frame; `body` is the raw body (header blocks still compressed). */
export type Frame =
  | { readonly kind: 'data'; readonly streamId: number; readonly flags: number; readonly data: Buffer }
  | { readonly kind: 'control'; readonly version: number; readonly type: number; readonly flags: number; readonly body: Buffer };

/**
 * Splits a byte stream into frames: feed it the socket's chunks, take the
 * complete frames out.
 */
export class FrameReader {
  private buf: Buffer = Buffer.alloc(0);

  /** Appends `chunk` and returns every frame now complete, in order. */
  push(chunk: Buffer): Frame[] {
    this.buf = this.buf.length === 0 ? chunk : Buffer.concat([this.buf, chunk]);
    const frames: Frame[] = [];
    while (this.buf.length >= 8) {
      const length = this.buf.readUIntBE(5, 3);
      if (this.buf.length < 8 + length) break;
      const flags = this.buf[4]!;
      const body = this.buf.subarray(8, 8 + length);
      const first = this.buf.readUInt32BE(0);
      if (first & 0x80000000) {
        frames.push({ kind: 'control', version: (first >>> 16) & 0x7fff, type: first & 0xffff, flags, body });
      } else {
        frames.push({ kind: 'data', streamId: first, flags, data: body });
      }
      this.buf = this.buf.subarray(8 + length);
    }
    return frames;
  }
}

/** A control frame of `type` with `body`. */
export function controlFrame(type: number, flags: number, body: Buffer): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt32BE((0x8000 | 3) * 0x10000 + type, 0);
  head[4] = flags;
  head.writeUIntBE(body.length, 5, 3);
  return Buffer.concat([head, body]);
}

/** A data frame on `streamId` (payload at most {@link MAX_FRAME_PAYLOAD}). */
export function dataFrame(streamId: number, flags: number, data: Uint8Array): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(streamId & 0x7fffffff, 0);
  head[4] = flags;
  head.writeUIntBE(data.length, 5, 3);
  return Buffer.concat([head, data]);
}

/** Body of a frame that is just 32-bit words (RST_STREAM, PING, GOAWAY, WINDOW_UPDATE). */
export function words(...values: number[]): Buffer {
  const b = Buffer.alloc(4 * values.length);
  values.forEach((v, i) => b.writeUInt32BE(v >>> 0, 4 * i));
  return b;
}

/** Header names (lower-case) to values; multiple values are NUL-separated on the wire. */
export type SpdyHeaders = Record<string, string>;

/** Serialises a header block (uncompressed): count, then length-prefixed names and values. */
export function headerBlock(headers: SpdyHeaders): Buffer {
  const parts: Buffer[] = [words(Object.keys(headers).length)];
  for (const [name, value] of Object.entries(headers)) {
    for (const s of [name.toLowerCase(), value]) {
      const b = Buffer.from(s, 'utf8');
      parts.push(words(b.length), b);
    }
  }
  return Buffer.concat(parts);
}

/** Parses an uncompressed header block; throws on a truncated one. */
export function parseHeaderBlock(b: Buffer): SpdyHeaders {
  let at = 0;
  const take = (): string => {
    const n = b.readUInt32BE(at);
    if (at + 4 + n > b.length) throw nodeletError('NDL_API_SPDY', 'truncated header block');
    const s = b.toString('utf8', at + 4, at + 4 + n);
    at += 4 + n;
    return s;
  };
  const count = b.readUInt32BE(0);
  at = 4;
  const headers: SpdyHeaders = {};
  for (let i = 0; i < count; i++) {
    const name = take().toLowerCase();
    headers[name] = take();
  }
  return headers;
}

/** Adler-32 of `b` (the dictionary id in a zlib header). */
function adler32(b: Uint8Array): number {
  let s1 = 1;
  let s2 = 0;
  for (const x of b) {
    s1 = (s1 + x) % 65521;
    s2 = (s2 + s1) % 65521;
  }
  return ((s2 << 16) | s1) >>> 0;
}

const SYNC_FLUSH_MARKER = Buffer.from([0x00, 0x00, 0x00, 0xff, 0xff]);

/**
 * Compresses this session's outgoing header blocks: the first carries the
 * zlib header naming the dictionary (CMF 0x78, FLG 0x20: FDICT set), every
 * block is stored deflate blocks ended by a sync-flush marker, and no block is final — the peer's single
 * zlib stream never ends, as SPDY wants.
 */
export class HeaderDeflater {
  private started = false;

  /** The compressed form of `headers`, for the next header-carrying frame. */
  compress(headers: SpdyHeaders): Buffer {
    const raw = headerBlock(headers);
    const parts: Buffer[] = [];
    if (!this.started) {
      this.started = true;
      parts.push(Buffer.from([0x78, 0x20]), words(adler32(SPDY3_DICTIONARY)));
    }
    for (let at = 0; at < raw.length; at += 0xffff) {
      const chunk = raw.subarray(at, at + 0xffff);
      const h = Buffer.alloc(5);
      h[0] = 0; // BFINAL=0, BTYPE=00 (stored)
      h.writeUInt16LE(chunk.length, 1);
      h.writeUInt16LE(~chunk.length & 0xffff, 3);
      parts.push(h, chunk);
    }
    // The sync-flush marker (an empty stored block), as zlib's Z_SYNC_FLUSH ends a
    // block: Go's flate hands out a stored block's bytes only when it reads the
    // next block header, which must therefore be inside this frame.
    parts.push(SYNC_FLUSH_MARKER);
    return Buffer.concat(parts);
  }
}

/** Decompresses the peer's header blocks, in the order they arrive (one zlib stream per session). */
export class HeaderInflater {
  private readonly inflate = zlib.createInflate({ dictionary: SPDY3_DICTIONARY });
  private failure: Error | undefined;

  constructor() {
    this.inflate.on('error', (e) => (this.failure = e));
  }

  /** The uncompressed bytes of the next block. */
  decompress(block: Buffer): Promise<Buffer> {
    return new Promise((resolve, reject) => {
      if (this.failure) return reject(this.failure);
      const chunks: Buffer[] = [];
      const onData = (c: Buffer) => chunks.push(c);
      const onError = (e: Error) => {
        this.inflate.off('data', onData);
        reject(e);
      };
      this.inflate.on('data', onData);
      this.inflate.once('error', onError);
      this.inflate.write(block);
      this.inflate.flush(zlib.constants.Z_SYNC_FLUSH, () => {
        this.inflate.off('data', onData);
        this.inflate.off('error', onError);
        resolve(Buffer.concat(chunks));
      });
    });
  }

  /** Frees the zlib context. */
  close(): void {
    this.inflate.destroy();
  }
}
