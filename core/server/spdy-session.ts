/**
 * The server side of one SPDY/3.1 session on an upgraded kubelet API
 * connection (see spdy-frames.ts for why it is hand-written). The peer (the
 * kube-apiserver, or any client-go SPDY client) opens every stream; nodelet
 * answers each SYN_STREAM with an empty SYN_REPLY, echoes PINGs, and never
 * opens streams itself.
 *
 * A stream's states (SPDY/3 section 2.3):
 *
 *   SYN_STREAM ──reply()──► open ──peer FIN──► half-closed (remote) ──end()──┐
 *                             └────end() (FIN)──► half-closed (local) ──peer FIN──┴─► closed
 *   any state ──RST_STREAM (either side) / session closed / GOAWAY──► destroyed
 *
 * A {@link SpdyStream} is a Node Duplex: readable = the peer's DATA frames
 * (ends at its FIN), writable = our DATA frames (`end()` sends FIN).
 */
import type { Socket } from 'node:net';
import { Duplex } from 'node:stream';
import type { Logger } from '@nodelet/plugin-api/v1';
import {
  FLAG_FIN,
  FrameReader,
  FrameType,
  HeaderDeflater,
  HeaderInflater,
  RstStatus,
  controlFrame,
  dataFrame,
  parseHeaderBlock,
  words,
  type Frame,
  type SpdyHeaders,
} from './spdy-frames.ts';

/** A session without any traffic for this long is closed (upstream's default streaming idle timeout, 4 h). */
export const STREAMING_IDLE_TIMEOUT_MS = 4 * 60 * 60 * 1000;

/** Bytes per DATA frame we send (spdystream accepts up to 16 MiB; small frames keep latency even). */
const DATA_CHUNK = 32 * 1024;

/** One stream the peer opened. */
export class SpdyStream extends Duplex {
  private replied = false;

  constructor(
    private readonly session: SpdySession,
    /** The stream id (odd: opened by the client). */
    readonly id: number,
    /** The SYN_STREAM's headers, names lower-cased (e.g. `streamtype`, `port`, `requestid`). */
    readonly headers: SpdyHeaders,
  ) {
    super({ allowHalfOpen: true });
    // Failures show up as the stream ending; a write after the peer reset it is not a crash.
    this.on('error', () => {});
  }

  private remoteEnded = false;

  /** Delivers the peer's data (`null`: its FIN); ignored after its FIN or once destroyed. */
  receive(data: Buffer | null): void {
    if (this.remoteEnded || this.destroyed) return;
    if (data === null) this.remoteEnded = true;
    this.push(data);
  }

  /** Accepts the stream (SYN_REPLY); required before writing. */
  reply(): void {
    if (this.replied) return;
    this.replied = true;
    this.session.send(controlFrame(FrameType.SYN_REPLY, 0, Buffer.concat([words(this.id), this.session.compressHeaders({})])));
  }

  /** Refuses or aborts the stream (RST_STREAM) and destroys it. */
  reset(status: number = RstStatus.CANCEL): void {
    if (!this.destroyed) this.session.send(controlFrame(FrameType.RST_STREAM, 0, words(this.id, status)));
    this.destroy();
  }

  override _read(): void {
    // No flow control (spdystream has none): the peer's data is pushed as it arrives.
  }

  override _write(chunk: Buffer, _enc: BufferEncoding, cb: (e?: Error | null) => void): void {
    this.reply();
    this.session.sendData(this.id, chunk, cb);
  }

  override _final(cb: (e?: Error | null) => void): void {
    this.reply();
    this.session.send(dataFrame(this.id, FLAG_FIN, Buffer.alloc(0)));
    cb();
  }
}

/** A SPDY/3.1 server session over an upgraded socket. */
export class SpdySession {
  private readonly streams = new Map<number, SpdyStream>();
  private readonly reader = new FrameReader();
  private readonly inflater = new HeaderInflater();
  private readonly deflater = new HeaderDeflater();
  private queue: Promise<void> = Promise.resolve();
  private lastStreamId = 0;
  private isClosed = false;
  private resolveClosed!: () => void;
  /** Settles once the session has ended (socket closed, GOAWAY, or {@link close}). */
  readonly closed: Promise<void> = new Promise((r) => (this.resolveClosed = r));

  constructor(
    private readonly socket: Duplex,
    private readonly onStream: (s: SpdyStream) => void,
    private readonly log?: Logger,
  ) {}

  /** Starts reading frames; `head` holds bytes that arrived with the upgrade request. */
  start(head?: Buffer): void {
    // Upstream's --streaming-connection-idle-timeout default: a session with no traffic at all ends.
    (this.socket as Partial<Pick<Socket, 'setTimeout'>>).setTimeout?.(STREAMING_IDLE_TIMEOUT_MS, () => this.close());
    this.socket.on('data', (c: Buffer) => this.feed(c));
    this.socket.on('error', (e) => this.log?.debug({ err: e.message }, 'SPDY connection error'));
    this.socket.on('close', () => this.teardown());
    this.socket.on('end', () => this.close());
    if (head && head.length > 0) this.feed(head);
  }

  /** True once the session has ended. */
  get ended(): boolean {
    return this.isClosed;
  }

  /** Writes a raw frame (no-op once closed); false when the socket's buffer is full. */
  send(frame: Buffer): boolean {
    if (this.isClosed || this.socket.destroyed) return true;
    return this.socket.write(frame);
  }

  /** The compressed header block for a frame we send. */
  compressHeaders(h: SpdyHeaders): Buffer {
    return this.deflater.compress(h);
  }

  /** Sends `chunk` as DATA frames on `id`; `cb` runs once the socket can take more. */
  sendData(id: number, chunk: Buffer, cb: (e?: Error | null) => void): void {
    let ok = true;
    for (let at = 0; at < chunk.length; at += DATA_CHUNK) ok = this.send(dataFrame(id, 0, chunk.subarray(at, at + DATA_CHUNK)));
    if (ok || this.isClosed) return cb();
    this.socket.once('drain', () => cb());
  }

  /** Ends the session: GOAWAY, every stream destroyed, the socket ended. */
  close(): void {
    if (this.isClosed) return;
    this.send(controlFrame(FrameType.GOAWAY, 0, words(this.lastStreamId, 0)));
    this.teardown();
    this.socket.end();
    setTimeout(() => this.socket.destroy(), 5_000).unref();
  }

  private teardown(): void {
    if (this.isClosed) return;
    this.isClosed = true;
    for (const s of this.streams.values()) s.destroy();
    this.streams.clear();
    this.inflater.close();
    this.resolveClosed();
  }

  private feed(chunk: Buffer): void {
    let frames: Frame[];
    try {
      frames = this.reader.push(chunk);
    } catch (e) {
      return this.fail(e);
    }
    for (const f of frames) this.queue = this.queue.then(() => this.handle(f)).catch((e: unknown) => this.fail(e));
  }

  private fail(e: unknown): void {
    if (this.isClosed) return;
    this.log?.debug({ err: e instanceof Error ? e.message : String(e) }, 'SPDY protocol error: closing the session');
    this.close();
  }

  private async handle(f: Frame): Promise<void> {
    if (this.isClosed) return;
    if (f.kind === 'data') return this.onData(f.streamId, f.flags, f.data);
    switch (f.type) {
      case FrameType.SYN_STREAM:
        return this.onSynStream(f.flags, f.body);
      case FrameType.SYN_REPLY:
      case FrameType.HEADERS:
        // Not expected from a client, but the header block must still be decoded to keep zlib in step.
        await this.inflater.decompress(f.body.subarray(4));
        return;
      case FrameType.RST_STREAM: {
        const s = this.streams.get(f.body.readUInt32BE(0) & 0x7fffffff);
        s?.destroy();
        return;
      }
      case FrameType.PING:
        this.send(controlFrame(FrameType.PING, 0, f.body));
        return;
      case FrameType.GOAWAY:
        this.close();
        return;
      default:
        return; // SETTINGS, WINDOW_UPDATE (no flow control), unknown: ignored as SPDY allows
    }
  }

  private async onSynStream(flags: number, body: Buffer): Promise<void> {
    const id = body.readUInt32BE(0) & 0x7fffffff;
    const headers = parseHeaderBlock(await this.inflater.decompress(body.subarray(10)));
    if (this.isClosed) return;
    if (id <= this.lastStreamId || id % 2 === 0) {
      this.send(controlFrame(FrameType.RST_STREAM, 0, words(id, RstStatus.PROTOCOL_ERROR)));
      return;
    }
    this.lastStreamId = id;
    const s = new SpdyStream(this, id, headers);
    this.streams.set(id, s);
    s.once('close', () => this.streams.delete(id));
    if (flags & FLAG_FIN) s.receive(null);
    this.onStream(s);
  }

  private onData(id: number, flags: number, data: Buffer): void {
    const s = this.streams.get(id);
    if (!s) {
      this.send(controlFrame(FrameType.RST_STREAM, 0, words(id, RstStatus.INVALID_STREAM)));
      return;
    }
    if (data.length > 0) s.receive(Buffer.from(data));
    if (flags & FLAG_FIN) s.receive(null);
  }
}
