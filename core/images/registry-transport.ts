/**
 * The HTTP exchanges of the registry client: undici's `request` through an `Agent`
 * of the registry client's own (the undici nodelet's probes and hooks use too,
 * core/kube/undici.ts), bodies as Node streams.
 *
 * Why not Node's global fetch: fetch is Node's bundled copy of undici, a second one,
 * which a node's first pull would load and compile (about 90 ms of the main thread
 * in a node's first burst, and memory kept for the node's life), and its WHATWG
 * bodies were turned back into Node streams by every consumer of a blob.
 *
 * What fetch did that `request` does not is done here:
 * - redirects (a registry sends blobs to storage elsewhere): undici's redirect interceptor
 *   follows up to {@link MAX_REDIRECTS}, dropping `Authorization` when the origin changes, as
 *   the Fetch standard and containerd's resolver do;
 * - a GET or HEAD whose kept-alive connection the registry closed as the request
 *   went out is sent once more, as Go's transport (containerd) retries an idempotent
 *   request that failed on a reused connection.
 *
 * Timeouts are undici's, per request: the response headers must come within the
 * headers timeout (a connection within it too), and a body must not wait longer than
 * the no-progress timeout for its next bytes. undici stops that clock while the
 * consumer holds the body back (back-pressure), so a slow disk is not a stalled
 * registry. Their errors are renamed to say what stalled and for how long
 * (`no response from <host> within 30s`, `no progress reading <host><path> for 300s`).
 */
import type { Readable } from 'node:stream';
import type { Dispatcher } from 'undici';
import { nodeletError } from '../errors/index.ts';
import { newAgent, redirectInterceptor, request } from '../kube/index.ts';

/** Redirects followed for one GET or HEAD (Fetch allows 20, Go's http.Client 10). */
export const MAX_REDIRECTS = 10;

/** One request to a registry or its token endpoint. */
export interface RegistryRequest {
  readonly method: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body?: Uint8Array;
  readonly signal?: AbortSignal;
}

/** A registry's answer. */
export interface RegistryResponse {
  readonly status: number;
  /** Header names in lower case. */
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  /** The body: read it to its end, or destroy it. */
  readonly body: Readable;
}

/** Sends one request and gives the final answer (redirects followed). Tests may wrap one. */
export type RegistryTransport = (url: string, req: RegistryRequest) => Promise<RegistryResponse>;

/** Timeouts of a {@link registryTransport}. */
export interface RegistryTransportOptions {
  /** How long a registry may take to accept a connection and to send response headers. */
  readonly headersTimeoutMs: number;
  /** How long a response body may send nothing while its reader waits. */
  readonly noProgressTimeoutMs: number;
}

/** The first value of header `name` (lower case). */
export function headerOf(res: RegistryResponse, name: string): string | undefined {
  const v = res.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

/** A 2xx status. */
export function isOk(res: RegistryResponse): boolean {
  return res.status >= 200 && res.status < 300;
}

/** The HTTP reason phrase of `status` (`Bad Request`), or '' for one without. */
export function statusText(status: number): string {
  // node:http through getBuiltinModule: its ES namespace loads Node's bundled undici (eslint.config.js says why).
  return process.getBuiltinModule('node:http').STATUS_CODES[status] ?? '';
}

/** A transport on an undici Agent of its own with the given timeouts, made with the first request (undici loads then). */
export function registryTransport(opts: RegistryTransportOptions): RegistryTransport {
  let dispatcher: Dispatcher | undefined;
  const once = async (url: string, req: RegistryRequest): Promise<RegistryResponse> => {
    // The redirect interceptor outermost: each hop goes through namedTimeouts, named after its own host.
    dispatcher ??= newAgent({ connect: { timeout: opts.headersTimeoutMs } }).compose(namedTimeouts, redirectInterceptor({ maxRedirections: MAX_REDIRECTS }));
    const res = await request(url, {
      dispatcher,
      method: req.method as Dispatcher.HttpMethod,
      headers: req.headers,
      body: req.body,
      signal: req.signal,
      headersTimeout: opts.headersTimeoutMs,
      bodyTimeout: opts.noProgressTimeoutMs,
    });
    return { status: res.statusCode, headers: res.headers, body: res.body };
  };
  return (url, req) =>
    once(url, req).catch((e: unknown) => {
      if (!req.signal?.aborted && idempotent(req.method) && closedBeforeAnswer(e)) return once(url, req);
      throw e;
    });
}

const idempotent = (method: string) => method === 'GET' || method === 'HEAD';

/** Whether a request failed because the connection closed before any answer (undici's `other side closed`, or a reset). */
export function closedBeforeAnswer(e: unknown): boolean {
  const code = (e as { code?: unknown } | undefined)?.code;
  return code === 'UND_ERR_SOCKET' || code === 'ECONNRESET';
}

/** undici's timeout errors, renamed to say what stalled: an interceptor composed onto the Agent. */
function namedTimeouts(dispatch: Dispatcher['dispatch']): Dispatcher['dispatch'] {
  return (opts, handler) => {
    const host = new URL(String(opts.origin)).host;
    const path = opts.path.replace(/\?.*$/, '');
    const rename = (e: Error): Error => {
      const code = (e as { code?: unknown }).code;
      if (code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_CONNECT_TIMEOUT')
        return nodeletError('NDL_IMAGE_PULL', `no response from ${host} within ${(opts.headersTimeout ?? 0) / 1000}s`, e);
      if (code === 'UND_ERR_BODY_TIMEOUT')
        return nodeletError('NDL_IMAGE_PULL', `no progress reading ${host}${path} for ${(opts.bodyTimeout ?? 0) / 1000}s`, e);
      return e;
    };
    const h = handler as Dispatcher.DispatchHandler;
    return dispatch(opts, {
      onRequestStart: (c, ctx) => h.onRequestStart?.(c, ctx),
      onRequestUpgrade: (c, status, headers, socket) => h.onRequestUpgrade?.(c, status, headers, socket),
      onResponseStart: (c, status, headers, text) => h.onResponseStart?.(c, status, headers, text),
      onResponseData: (c, chunk) => h.onResponseData?.(c, chunk),
      onResponseEnd: (c, trailers) => h.onResponseEnd?.(c, trailers),
      onResponseError: (c, e) => h.onResponseError?.(c, rename(e)),
    });
  };
}
