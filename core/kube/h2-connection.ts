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

/** TLS settings of the connection: CA, client certificate and key, verification, server name. */
export type H2Tls = Pick<ConnectionOptions, 'ca' | 'cert' | 'key' | 'rejectUnauthorized' | 'servername'>;

/** One exchange on a stream: its timeouts and the answer's order (see ApiAnswer). */
class H2Exchange {
  private stream: ClientHttp2Stream | undefined;
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
      const session = this.stream?.session as ClientHttp2Session | undefined;
      this.cancel(Object.assign(new Error(code === HEADERS_TIMEOUT ? 'Headers Timeout Error' : 'Body Timeout Error'), { code }));
      if (session) this.conn.checkAlive(session, ms);
    }, ms);
  }

  private cancel(err: Error): void {
    if (this.done) return;
    if (this.inner) return this.inner(err);
    this.finish(err);
    if (this.stream && !this.stream.closed) this.stream.close(NGHTTP2_CANCEL);
  }

  private finish(err?: Error): void {
    if (this.done) return;
    this.done = true;
    clearTimeout(this.timer);
    if (err) this.answer.error(err);
    else this.answer.end();
  }

  /** Sends the exchange as a new stream of `session`. */
  open(session: ClientHttp2Session): void {
    if (this.done) return;
    const { ex } = this;
    let st: ClientHttp2Stream;
    try {
      st = session.request({ ':method': ex.method, ':path': ex.path, ...ex.headers }, { endStream: ex.body === undefined });
    } catch (e) {
      return this.finish(e as Error);
    }
    this.stream = st;
    this.conn.opened(session, st);
    const heard = () => this.conn.heard(session);
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

  fail(e: Error): void {
    this.finish(e);
  }
}

/** See the module comment. */
export class H2Connection implements ApiConnection {
  private session: ClientHttp2Session | undefined;
  private connecting: Promise<ClientHttp2Session | ApiConnection> | undefined;
  private h1: ApiConnection | undefined;
  private closed = false;
  private readonly sessions = new Set<ClientHttp2Session>();
  private readonly streams = new Map<ClientHttp2Session, number>();
  private readonly pinging = new Set<ClientHttp2Session>();
  private readonly lastHeard = new Map<ClientHttp2Session, number>();

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
    if (this.closed) return x.fail(new Error('the API connection is closed'));
    if (this.session && !this.session.closed && !this.session.destroyed) return x.open(this.session);
    this.connect().then(
      (c) => (c === this.h1 ? x.handOver(c) : x.open(c as ClientHttp2Session)),
      (e: Error) => x.fail(e),
    );
  }

  /** Counts an open stream of `s`: the session holds the process only while one is open. */
  opened(s: ClientHttp2Session, st: ClientHttp2Stream): void {
    const n = (this.streams.get(s) ?? 0) + 1;
    this.streams.set(s, n);
    if (n === 1) s.ref();
    st.once('close', () => {
      const left = (this.streams.get(s) ?? 1) - 1;
      this.streams.set(s, left);
      if (left === 0 && !s.destroyed) s.unref();
    });
  }

  /** Notes that `s` received a frame (a response, data, a PING's answer). */
  heard(s: ClientHttp2Session): void {
    this.lastHeard.set(s, Date.now());
  }

  /** The health check: with streams open and nothing heard for `readIdleMs`, a PING. */
  private idleCheck(s: ClientHttp2Session): void {
    if ((this.streams.get(s) ?? 0) > 0 && Date.now() - (this.lastHeard.get(s) ?? 0) >= this.timing.readIdleMs) this.checkAlive(s, this.timing.pingTimeoutMs);
  }

  /** A session that does not answer a PING within `timeoutMs` (at least 1 s) is replaced. */
  checkAlive(s: ClientHttp2Session, timeoutMs: number): void {
    if (s.destroyed || this.pinging.has(s)) return;
    this.pinging.add(s);
    const dead = () => {
      this.drop(s);
      s.destroy(new Error(`no answer to a PING within ${Math.max(1000, timeoutMs)} ms`));
    };
    const timer = setTimeout(dead, Math.max(1000, timeoutMs));
    timer.unref();
    try {
      s.ping((err) => {
        clearTimeout(timer);
        this.pinging.delete(s);
        if (err) dead();
        else this.heard(s);
      });
    } catch {
      clearTimeout(timer);
      dead();
    }
  }

  private drop(s: ClientHttp2Session): void {
    if (this.session === s) this.session = undefined;
  }

  private connect(): Promise<ClientHttp2Session | ApiConnection> {
    this.connecting ??= new Promise<ClientHttp2Session | ApiConnection>((resolve, reject) => {
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
        s.on('error', () => undefined); // each open stream gets the error; the session is replaced on close
        s.on('goaway', () => this.drop(s));
        s.once('connect', () => {
          if (!s.destroyed) s.setLocalWindowSize(CONNECTION_WINDOW);
        });
        this.heard(s);
        const health = setInterval(() => this.idleCheck(s), Math.max(100, this.timing.readIdleMs / 2));
        health.unref();
        s.on('close', () => {
          clearInterval(health);
          this.drop(s);
          this.sessions.delete(s);
          this.streams.delete(s);
          this.lastHeard.delete(s);
        });
        s.unref();
        this.sessions.add(s);
        if (this.closed) s.close();
        else this.session = s;
        resolve(s);
      });
    }).finally(() => (this.connecting = undefined));
    return this.connecting;
  }

  async close(): Promise<void> {
    this.closed = true;
    this.session = undefined;
    await Promise.all([...this.sessions].map((s) => new Promise<void>((r) => (s.closed ? r() : s.close(() => r())))));
    await this.h1?.close();
  }
}
