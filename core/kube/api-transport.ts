/**
 * The HTTP side of nodelet's API client: JSON requests and watches to the
 * apiserver of a kubeconfig through one connection per apiserver, user and client
 * certificate — like upstream's kubelet, which has one rotating transport. The
 * connection is HTTP/2 over node:http2 for an `https://` server (`h2-connection.ts`),
 * undici over HTTP/1.1 for the rest (`api-connection.ts`).
 *
 * When the client certificate changes (a rotated file named by the kubeconfig,
 * or `credentials` returning a new pair), new requests get a new pool and the old
 * one is closed gracefully, as client-go's rotating transport does: idle connections
 * now, requests in flight and watches when they end.
 *
 * Every request is counted in `rest_client_requests_total{code, host, method}`
 * (`<error>` when no response came), like client-go's metric.
 *
 * An answer 429 or 5xx with `Retry-After` is waited out and the request sent again, as
 * client-go does; while the apiserver refuses so, the client's requests go one at a time
 * (`retry-after.ts`). Watches are not held.
 *
 * Requests wait for their answer as long as the apiserver takes, unless the
 * transport has a timeout ({@link ApiTransport.withTimeout}): upstream's kubelet
 * gives its heartbeat client (node status, Lease) one of `nodeStatusUpdateFrequency`
 * (10 s), so that a request stuck on a dead connection or in the apiserver's queue
 * is given up, and a connection that stopped answering is replaced (see `timeouts`).
 *
 * Hand-written instead of client-node's generated API: see `kubeconfig.ts` for why.
 */
import { readFileSync, statSync } from 'node:fs';
import { StringDecoder } from 'node:string_decoder';
import { BODY_TIMEOUT, HEADERS_TIMEOUT, undiciConnection, type ApiConnection, type ApiExchange } from './api-connection.ts';
import { H2Connection } from './h2-connection.ts';
import { newAgent, newProxyAgent } from './undici.ts';
import { nodeletError, type NodeletError } from '../errors/index.ts';
import { restClientRequests } from '../metrics/index.ts';
import type { KubeConfig } from './kubeconfig.ts';
import { MAX_RETRIES, RetryAfterGate, retryAfterMs } from './retry-after.ts';

/** The client certificate and key to use now (PEM), e.g. from a rotating certificate manager. */
export type ClientCredentials = () => { cert: string; key: string } | undefined;

/** Query parameters; undefined values are left out. */
export type Query = Readonly<Record<string, string | number | boolean | undefined>>;

/** An error the apiserver answered: `httpStatus` and the response body (usually a Status). */
export type ApiStatusError = NodeletError & { readonly httpStatus: number; readonly body: string };

/** How long a watch may stay silent before it is ended with a `TimeoutError` (client-node's `Watch`). */
export const WATCH_IDLE_TIMEOUT_MS = 30_000;

interface Pool {
  readonly connection: ApiConnection;
  readonly cert: string;
  readonly key: string;
}

interface Prepared {
  readonly basePath: string;
  readonly host: string;
  readonly headers: Record<string, string>;
  readonly connection: ApiConnection;
}

const decode = (data?: string) => (data ? Buffer.from(data, 'base64').toString('utf8') : '');

/**
 * Files named by the kubeconfig (client certificate, key, token), re-read only when
 * their size, mtime or inode changed: a `stat` per request instead of an open, read
 * and close of each (those were ~0.3 ms of the main thread per request in a burst).
 */
const fileCache = new Map<string, { sig: string; text: string }>();
function readFileCached(file: string): string {
  const st = statSync(file, { bigint: true });
  const sig = `${st.ino}:${st.size}:${st.mtimeNs}`;
  const have = fileCache.get(file);
  if (have?.sig === sig) return have.text;
  const text = readFileSync(file, 'utf8');
  fileCache.set(file, { sig, text });
  return text;
}
const readText = (file?: string, data?: string) => (file ? readFileCached(file) : decode(data));

function statusMessage(status: number, body: string): string {
  try {
    const s = JSON.parse(body) as { message?: unknown };
    if (typeof s.message === 'string' && s.message) return s.message;
  } catch {
    /* not JSON */
  }
  return `HTTP-Code: ${status}`;
}

/** An apiserver answer outside 2xx as an NDL_API_REQUEST error. */
export function statusError(status: number, body: string): ApiStatusError {
  return Object.assign(nodeletError('NDL_API_REQUEST', statusMessage(status, body)), { httpStatus: status, body });
}

/**
 * One exchange, keeping the answer's bytes (no body stream: a Readable and an AsyncResource
 * per answer were ~0.3 ms of the main thread per call in a pod burst, bench/results/,
 * "Requests without a body stream"). Rejects with the connection's error; one that came
 * after the status line carries it as `responseStatus`.
 */
function sendText(connection: ApiConnection, ex: ApiExchange): Promise<{ status: number; text: string; retryAfter?: string | string[] }> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let status: number | undefined;
    let retryAfter: string | string[] | undefined;
    connection.send(ex, {
      started() {},
      response(code, ra) {
        status = code;
        retryAfter = ra;
      },
      data(chunk) {
        chunks.push(chunk);
      },
      end() {
        resolve({ status: status ?? 0, text: chunks.length === 1 ? chunks[0]!.toString('utf8') : Buffer.concat(chunks).toString('utf8'), retryAfter });
      },
      error(err) {
        reject(status === undefined ? err : Object.assign(err, { responseStatus: status }));
      },
    });
  });
}

/** The message of a request that timed out (the connection's timeout errors), else undefined. */
function timeoutMessage(e: unknown, timeoutMs?: number): string | undefined {
  const code = (e as { code?: unknown })?.code;
  if (code === HEADERS_TIMEOUT) return `no answer within ${timeoutMs} ms; the request was cancelled`;
  if (code === BODY_TIMEOUT) return `the answer stopped for ${timeoutMs} ms; the request was cancelled`;
  return undefined;
}

/** Requests and watches to a kubeconfig's current cluster (see the module comment). */
export class ApiTransport {
  private readonly pools: Map<string, Pool>;
  /** Holds requests while the apiserver asks to wait (`retry-after.ts`); shared with {@link withTimeout}'s transports. */
  private readonly gate: RetryAfterGate;

  constructor(
    readonly kc: KubeConfig,
    private readonly credentials?: ClientCredentials,
    private readonly timing: { readonly timeoutMs?: number; readonly pools?: Map<string, Pool>; readonly gate?: RetryAfterGate } = {},
  ) {
    this.pools = timing.pools ?? new Map();
    this.gate = timing.gate ?? new RetryAfterGate();
  }

  /**
   * The same apiserver, credentials and connections, with requests that give up after
   * `timeoutMs` (client-go's `rest.Config.Timeout`: waits for `Retry-After` included); watches
   * are not timed.
   */
  withTimeout(timeoutMs: number): ApiTransport {
    return new ApiTransport(this.kc, this.credentials, { timeoutMs, pools: this.pools, gate: this.gate });
  }

  /** True while the apiserver refuses this client's requests with `Retry-After` (see `retry-after.ts`). */
  get throttled(): boolean {
    return this.gate.throttling;
  }

  /** The timeout of each request, if any. */
  get timeoutMs(): number | undefined {
    return this.timing.timeoutMs;
  }

  /** How many connection pools exist (one per apiserver, user and certificate in use). */
  get poolCount(): number {
    return this.pools.size;
  }

  /** The origin, headers and pool for the next request, from the current TLS material. */
  private prepare(): Prepared {
    const cluster = this.kc.getCurrentCluster();
    if (!cluster) throw nodeletError('NDL_API_CLIENT', 'kubeconfig has no current cluster');
    const user = this.kc.getCurrentUser();
    if (user?.unsupported) throw nodeletError('NDL_API_CLIENT', `kubeconfig user ${user.name} uses an ${user.unsupported}, which nodelet does not run`);
    const url = new URL(cluster.server);
    const headers: Record<string, string> = { accept: 'application/json' };
    const token = user?.tokenFile ? readFileCached(user.tokenFile).trim() : user?.token;
    if (token) headers.authorization = `Bearer ${token}`;
    const creds = this.credentials?.();
    const cert = creds?.cert ?? readText(user?.certFile, user?.certData);
    const key = creds?.key ?? readText(user?.keyFile, user?.keyData);
    const id = JSON.stringify([cluster.server, user?.name ?? '']);
    let pool = this.pools.get(id);
    if (!pool || pool.cert !== cert || pool.key !== key) {
      if (pool) void pool.connection.close().catch(() => undefined);
      const ca = readText(cluster.caFile, cluster.caData);
      const tls = {
        ...(ca ? { ca } : {}),
        ...(cert && key ? { cert, key } : {}),
        rejectUnauthorized: !cluster.skipTLSVerify,
        ...(cluster.tlsServerName ? { servername: cluster.tlsServerName } : {}),
      };
      const http1 = () => undiciConnection(newAgent({ connect: tls }), url.origin);
      const connection = cluster.proxyUrl
        ? undiciConnection(newProxyAgent({ uri: cluster.proxyUrl, requestTls: tls }), url.origin)
        : url.protocol === 'https:'
          ? new H2Connection(url, tls, http1)
          : http1();
      pool = { connection, cert, key };
      this.pools.set(id, pool);
    }
    return { basePath: url.pathname.replace(/\/$/, ''), host: url.host, headers, connection: pool.connection };
  }

  /**
   * One request; resolves to the parsed JSON answer of a 2xx (undefined with `discard`: a
   * caller that does not read the answer, e.g. the whole pod a status PATCH returns, is not
   * made to parse it), rejects with an {@link ApiStatusError} for any other status and
   * NDL_API_REQUEST when no answer came. An answer 429/5xx with `Retry-After` is waited out
   * and the request sent again, up to 10 times (see `retry-after.ts`); then it is the error.
   */
  async request<T>(method: string, path: string, o: { query?: Query; body?: unknown; contentType?: string; discard?: boolean } = {}): Promise<T> {
    const timeoutMs = this.timing.timeoutMs;
    const deadline = timeoutMs === undefined ? Infinity : Date.now() + timeoutMs;
    const body = o.body === undefined ? undefined : JSON.stringify(o.body);
    let refused: ApiStatusError | undefined;
    for (let retries = 0; ; retries++) {
      const outcome = await this.gate.turn(deadline);
      if (!outcome)
        throw refused ?? nodeletError('NDL_API_REQUEST', `${method} ${path}: the apiserver asked to wait beyond this request's timeout of ${timeoutMs} ms`);
      let p: Prepared;
      try {
        p = this.prepare();
      } catch (e) {
        outcome(false);
        throw e;
      }
      const headers = body === undefined ? p.headers : { ...p.headers, 'content-type': o.contentType ?? 'application/json' };
      let res: { status: number; text: string; retryAfter?: string | string[] };
      try {
        res = await sendText(p.connection, {
          path: p.basePath + path + queryString(o.query),
          method,
          headers,
          body,
          timeoutMs: deadline === Infinity ? undefined : Math.max(1, deadline - Date.now()),
        });
      } catch (e) {
        const status = (e as { responseStatus?: number }).responseStatus;
        outcome(status !== undefined);
        countRequest(p.host, method, status === undefined ? '<error>' : String(status));
        throw nodeletError('NDL_API_REQUEST', `${method} ${path}: ${timeoutMessage(e, timeoutMs) ?? (e as Error).message}`, e);
      }
      countRequest(p.host, method, String(res.status));
      const wait = retryAfterMs(res.status, res.retryAfter);
      outcome(true, wait);
      if (res.status >= 200 && res.status <= 299) return (res.text && !o.discard ? JSON.parse(res.text) : undefined) as T;
      refused = statusError(res.status, res.text);
      if (wait === undefined || retries >= MAX_RETRIES) throw refused;
    }
  }

  /**
   * Watches `path` (client-node's `Watch.watch` contract): `onEvent` gets each event;
   * `done` is called once, with an error or null when the stream ended, or with a
   * `TimeoutError` after {@link WATCH_IDLE_TIMEOUT_MS} of silence. Resolves to a
   * controller that ends the watch; `done(null)` follows an abort by the caller.
   */
  async watch(
    path: string,
    query: Query,
    onEvent: (type: string, object: unknown) => void,
    done: (err: unknown) => void,
    idleTimeoutMs = WATCH_IDLE_TIMEOUT_MS,
  ): Promise<AbortController> {
    const ctl = new AbortController();
    let timer: NodeJS.Timeout | undefined;
    let timedOut = false;
    let finished = false;
    const finish = (err: unknown) => {
      if (finished) return;
      finished = true;
      clearTimeout(timer);
      ctl.abort();
      done(err && timedOut ? Object.assign(nodeletError('NDL_API_REQUEST', `watch ${path} silent for ${idleTimeoutMs} ms`), { name: 'TimeoutError' }) : err);
    };
    const idle = () => {
      clearTimeout(timer);
      timer = setTimeout(() => {
        timedOut = true;
        ctl.abort();
      }, idleTimeoutMs);
      timer.unref();
    };
    // A watch waits its turn like any request: while the apiserver asks this client to wait
    // (`Retry-After`), a watch started again after a refusal waits it out instead of retrying at once.
    const outcome = (await this.gate.turn())!;
    let p: Prepared;
    try {
      p = this.prepare();
    } catch (e) {
      outcome(false);
      finish(e);
      return ctl;
    }
    idle();
    const prepared = p;
    // An answer that splits the bytes into lines itself: a Readable body stream per watch
    // cost ~0.1 ms of the main thread per event in a pod burst (see sendText).
    return new Promise<AbortController>((resolve) => {
      let status: number | undefined;
      let cancel: ((reason?: Error) => void) | undefined;
      ctl.signal.addEventListener('abort', () => cancel?.(ctl.signal.reason as Error), { once: true });
      const decoder = new StringDecoder('utf8');
      const refusal: Buffer[] = [];
      let rest = '';
      const lines = (text: string) => {
        rest += text;
        let from = 0;
        let nl: number;
        while ((nl = rest.indexOf('\n', from)) >= 0) {
          const line = rest.slice(from, nl);
          from = nl + 1;
          if (!line.trim()) continue;
          let ev: { type?: string; object?: unknown };
          try {
            ev = JSON.parse(line) as { type?: string; object?: unknown };
          } catch {
            continue; // as client-node: a line that is not JSON is skipped
          }
          if (!finished) onEvent(String(ev.type), ev.object);
        }
        rest = rest.slice(from);
      };
      const failed = (e: unknown) => {
        outcome(false);
        if (!ctl.signal.aborted || timedOut) countRequest(prepared.host, 'GET', '<error>');
        finish(ctl.signal.aborted && !timedOut ? null : nodeletError('NDL_API_REQUEST', `watch ${path}: ${(e as Error).message}`, e));
        resolve(ctl);
      };
      prepared.connection.send(
        { path: prepared.basePath + path + queryString({ ...query, watch: 'true' }), method: 'GET', headers: prepared.headers },
        {
          started(c) {
            cancel = c;
            if (ctl.signal.aborted) c(ctl.signal.reason as Error);
          },
          response(code, retryAfter) {
            outcome(true, retryAfterMs(code, retryAfter));
            status = code;
            countRequest(prepared.host, 'GET', String(code));
            if (code === 200) idle();
            resolve(ctl);
          },
          data(chunk) {
            if (status !== 200) {
              refusal.push(chunk);
              return;
            }
            idle();
            lines(decoder.write(chunk));
          },
          end() {
            if (status !== 200) return finish(statusError(status ?? 0, Buffer.concat(refusal).toString('utf8')));
            lines(decoder.end());
            finish(null);
          },
          error(e) {
            if (status === undefined) return failed(e);
            if (status !== 200) return finish(statusError(status, Buffer.concat(refusal).toString('utf8')));
            finish(ctl.signal.aborted && !timedOut ? null : e);
          },
        },
      );
    });
  }

  /** Closes every pool (tests, shutdown). */
  async close(): Promise<void> {
    const all = [...this.pools.values()];
    this.pools.clear();
    await Promise.all(all.map((p) => p.connection.close().catch(() => undefined)));
  }
}

function queryString(q?: Query): string {
  if (!q) return '';
  const s = new URLSearchParams();
  for (const [k, v] of Object.entries(q)) if (v !== undefined) s.set(k, String(v));
  const text = s.toString();
  return text ? `?${text}` : '';
}

function countRequest(host: string, method: string, code: string): void {
  restClientRequests.inc({ code, host, method });
}
