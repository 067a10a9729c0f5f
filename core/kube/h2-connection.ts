/**
 * An {@link ApiConnection} to an `https://` apiserver over one HTTP/2 connection of
 * node:http2, as client-go's transport talks to it: every request and watch is a stream
 * of that connection.
 *
 * Why node:http2 and not undici: undici's HTTP/2 client is itself built on node:http2,
 * and its own layers cost memory the API client has no use for: 20 requests in a bare
 * process cost 4.7–5.2 MiB through undici against 1.0–1.1 through node:http2, and an
 * idle nodelet is ~1 MiB smaller without undici (bench/README.md, "Idle memory"). No
 * kept library is a thin HTTP/2 client over node:http2.
 *
 * The connection:
 * - is opened by the first exchange with TLS and ALPN `h2, http/1.1`; when the server
 *   does not choose h2 (a proxy in front of the apiserver), the socket is closed and every
 *   exchange goes through `fallback()` (undici over HTTP/1.1) for the pool's life;
 * - is replaced when it fails, when the server sends GOAWAY (streams already open finish
 *   on the old one; a stream the server refused unprocessed is sent again on the new one),
 *   and when it does not answer a PING: one sent after a request timed out (answer within
 *   the timeout, at least 1 s), and client-go's HTTP/2 health check, one sent when a
 *   connection with open streams has heard nothing for {@link READ_IDLE_TIMEOUT_MS}
 *   (answer within {@link PING_TIMEOUT_MS}); the streams of a dead connection fail and the
 *   next request does not wait on it;
 * - keeps the process alive only while a stream is open;
 * - gives up opening after {@link CONNECT_TIMEOUT_MS} (Go's TLS handshake timeout).
 *
 * Flow-control windows are 4 MiB a stream (Go's transport's) and 16 MiB for the
 * connection: a LIST of many pods is not read 64 KiB at a time.
 */
import type { ClientHttp2Session, ClientHttp2Stream, IncomingHttpHeaders } from 'node:http2';
import http2 from 'node:http2';
import net from 'node:net';
import tls, { type ConnectionOptions } from 'node:tls';
import { BODY_TIMEOUT, HEADERS_TIMEOUT, type ApiAnswer, type ApiConnection, type ApiExchange } from './api-connection.ts';

/** How long opening the TLS connection may take (Go's `TLSHandshakeTimeout`, 10 s). */
export const CONNECT_TIMEOUT_MS = 10_000;
/** client-go's HTTP/2 `ReadIdleTimeout`: a connection with open streams silent this long is sent a PING. */
export const READ_IDLE_TIMEOUT_MS = 30_000;
/** client-go's HTTP/2 `PingTimeout`: how long that PING's answer may take before the connection is replaced. */
export const PING_TIMEOUT_MS = 15_000;

/** The health check's timing (tests shorten it). */
export interface H2Timing {
  readonly readIdleMs: number;
  readonly pingTimeoutMs: number;
}
const STREAM_WINDOW = 4 << 20;
const CONNECTION_WINDOW = 16 << 20;
const { NGHTTP2_CANCEL, NGHTTP2_REFUSED_STREAM } = http2.constants;

/** One open HTTP/2 connection and what the health check and the process reference need of it. */
interface Live {
  readonly session: ClientHttp2Session;
  /** Streams open on it: it holds the process only while there is one. */
  streams: number;
  /** When it last received a frame (a response, data, a PING's answer). */
  lastHeard: number;
  pinging: boolean;
}

/** TLS settings of the connection: CA, client certificate and key, verification, server name. */
export type H2Tls = Pick<ConnectionOptions, 'ca' | 'cert' | 'key' | 'rejectUnauthorized' | 'servername'>;

/** One exchange on a stream: its timeouts and the answer's order (see ApiAnswer). */
class H2Exchange {
  private stream: ClientHttp2Stream | undefined;
  /** The connection `stream` is on. */
  private live: Live | undefined;
  private inner: ((reason?: Error) => void) | undefined;
  private timer: NodeJS.Timeout | undefined;
  private done = false;
  private status: number | undefined;
  private resent = false;

  constructor(
    private readonly ex: ApiExchange,
    private readonly answer: ApiAnswer,
    private readonly conn: H2Connection,
  ) {
    answer.started((reason) => this.cancel(reason ?? Object.assign(new Error('request aborted'), { name: 'AbortError' })));
    this.arm(HEADERS_TIMEOUT);
  }

  private arm(code: string): void {
    const ms = this.ex.timeoutMs;
    if (ms === undefined || this.done) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      const live = this.live;
      this.cancel(Object.assign(new Error(code === HEADERS_TIMEOUT ? 'Headers Timeout Error' : 'Body Timeout Error'), { code }));
      if (live) this.conn.checkAlive(live, ms);
    }, ms);
  }

  private cancel(err: Error): void {
    if (this.done) return;
    if (this.inner) return this.inner(err);
    this.finish(err);
    if (this.stream && !this.stream.closed) this.stream.close(NGHTTP2_CANCEL);
  }

  /** Ends the exchange: `answer.end()`, or `answer.error(err)`. */
  finish(err?: Error): void {
    if (this.done) return;
    this.done = true;
    clearTimeout(this.timer);
    if (err) this.answer.error(err);
    else this.answer.end();
  }

  /** Sends the exchange as a new stream of the connection `live`. */
  open(live: Live): void {
    if (this.done) return;
    const { ex } = this;
    let st: ClientHttp2Stream;
    try {
      st = live.session.request({ ':method': ex.method, ':path': ex.path, ...ex.headers }, { endStream: ex.body === undefined });
    } catch (e) {
      return this.finish(e as Error);
    }
    this.stream = st;
    this.live = live;
    this.conn.opened(live, st);
    const heard = () => (live.lastHeard = Date.now());
    // Events of a stream this exchange left (sent again elsewhere) are not its own any more.
    const mine = () => this.stream === st && !this.done;
    st.on('response', (h: IncomingHttpHeaders) => {
      heard();
      if (!mine()) return;
      this.status = Number(h[':status']);
      this.arm(BODY_TIMEOUT);
      this.answer.response(this.status, h['retry-after']);
    });
    st.on('data', (chunk: Buffer) => {
      heard();
      if (!mine()) return;
      this.arm(BODY_TIMEOUT);
      this.answer.data(chunk);
    });
    st.on('end', () => {
      if (mine()) this.finish();
    });
    st.on('error', (e: Error) => {
      if (mine() && !this.resend(st)) this.finish(e);
    });
    st.on('close', () => {
      if (mine() && !this.resend(st)) this.finish(new Error(`the apiserver closed the stream (HTTP/2 error code ${st.rstCode})`));
    });
    if (ex.body !== undefined) st.end(ex.body);
  }

  /** A stream the server refused before processing it (GOAWAY) goes once more on a new connection. */
  private resend(st: ClientHttp2Stream): boolean {
    if (this.resent || this.status !== undefined || st.rstCode !== NGHTTP2_REFUSED_STREAM) return false;
    this.resent = true;
    this.stream = undefined;
    this.live = undefined;
    this.conn.route(this);
    return true;
  }

  /** Sends the exchange through `other` (the HTTP/1.1 fallback): its own timeouts apply from now. */
  handOver(other: ApiConnection): void {
    if (this.done) return;
    clearTimeout(this.timer);
    const a = this.answer;
    other.send(this.ex, {
      started: (cancel) => (this.inner = cancel),
      response: (status, retryAfter) => a.response(status, retryAfter),
      data: (chunk) => a.data(chunk),
      end: () => this.finish(),
      error: (e) => this.finish(e),
    });
  }
}

/** See the module comment. */
export class H2Connection implements ApiConnection {
  /** The connection new streams go on. */
  private current: Live | undefined;
  private connecting: Promise<Live | ApiConnection> | undefined;
  private h1: ApiConnection | undefined;
  private closed = false;
  /** Every connection still open: the current one and those finishing their streams. */
  private readonly open = new Set<Live>();

  constructor(
    private readonly origin: URL,
    private readonly tlsOptions: H2Tls,
    private readonly fallback: () => ApiConnection,
    private readonly timing: H2Timing = { readIdleMs: READ_IDLE_TIMEOUT_MS, pingTimeoutMs: PING_TIMEOUT_MS },
  ) {}

  send(ex: ApiExchange, answer: ApiAnswer): void {
    if (this.h1) return this.h1.send(ex, answer);
    this.route(new H2Exchange(ex, answer, this));
  }

  /** Opens `x` on the current connection, or on a new one. */
  route(x: H2Exchange): void {
    if (this.closed) return x.finish(new Error('the API connection is closed'));
    const c = this.current;
    if (c && !c.session.closed && !c.session.destroyed) return x.open(c);
    this.connect().then(
      (to) => (to === this.h1 ? x.handOver(to) : x.open(to as Live)),
      (e: Error) => x.finish(e),
    );
  }

  /** Counts an open stream of `live`: the connection holds the process only while one is open. */
  opened(live: Live, st: ClientHttp2Stream): void {
    if (live.streams++ === 0) live.session.ref();
    st.once('close', () => {
      if (--live.streams === 0 && !live.session.destroyed) live.session.unref();
    });
  }

  /** A connection that does not answer a PING within `timeoutMs` (at least 1 s) is replaced. */
  checkAlive(live: Live, timeoutMs: number): void {
    const s = live.session;
    if (s.destroyed || live.pinging) return;
    live.pinging = true;
    const dead = () => {
      this.drop(live);
      s.destroy(new Error(`no answer to a PING within ${Math.max(1000, timeoutMs)} ms`));
    };
    const timer = setTimeout(dead, Math.max(1000, timeoutMs));
    timer.unref();
    try {
      s.ping((err) => {
        clearTimeout(timer);
        live.pinging = false;
        if (err) dead();
        else live.lastHeard = Date.now();
      });
    } catch {
      clearTimeout(timer);
      dead();
    }
  }

  private drop(live: Live): void {
    if (this.current === live) this.current = undefined;
  }

  private connect(): Promise<Live | ApiConnection> {
    this.connecting ??= new Promise<Live | ApiConnection>((resolve, reject) => {
      const host = this.origin.hostname.replace(/^\[(.*)\]$/, '$1');
      const port = Number(this.origin.port || 443);
      const servername = this.tlsOptions.servername ?? (net.isIP(host) ? undefined : host);
      const socket = tls.connect({ ...this.tlsOptions, host, port, ...(servername ? { servername } : {}), ALPNProtocols: ['h2', 'http/1.1'] });
      const failed = (e: Error) => {
        clearTimeout(timer);
        reject(e);
      };
      const timer = setTimeout(
        () => socket.destroy(Object.assign(new Error(`no TLS connection to ${this.origin.host} within ${CONNECT_TIMEOUT_MS} ms`), { code: 'ETIMEDOUT' })),
        CONNECT_TIMEOUT_MS,
      );
      socket.once('error', failed);
      socket.once('secureConnect', () => {
        clearTimeout(timer);
        socket.off('error', failed);
        if (socket.alpnProtocol !== 'h2') {
          socket.destroy();
          this.h1 ??= this.fallback();
          return resolve(this.h1);
        }
        const s = http2.connect(this.origin, { createConnection: () => socket, settings: { enablePush: false, initialWindowSize: STREAM_WINDOW } });
        const live: Live = { session: s, streams: 0, lastHeard: Date.now(), pinging: false };
        s.on('error', () => undefined); // each open stream gets the error; the connection is replaced on close
        s.on('goaway', () => this.drop(live));
        s.once('connect', () => {
          if (!s.destroyed) s.setLocalWindowSize(CONNECTION_WINDOW);
        });
        // The health check: with streams open and nothing heard for `readIdleMs`, a PING.
        const health = setInterval(
          () => {
            if (live.streams > 0 && Date.now() - live.lastHeard >= this.timing.readIdleMs) this.checkAlive(live, this.timing.pingTimeoutMs);
          },
          Math.max(100, this.timing.readIdleMs / 2),
        );
        health.unref();
        s.on('close', () => {
          clearInterval(health);
          this.drop(live);
          this.open.delete(live);
        });
        s.unref();
        this.open.add(live);
        if (this.closed) s.close();
        else this.current = live;
        resolve(live);
      });
    }).finally(() => (this.connecting = undefined));
    return this.connecting;
  }

  async close(): Promise<void> {
    this.closed = true;
    this.current = undefined;
    await Promise.all([...this.open].map(({ session: s }) => new Promise<void>((r) => (s.closed ? r() : s.close(() => r())))));
    await this.h1?.close();
  }
}
