// wasi:http/types' resources as nodelet's own host implements them: fields, requests and
// responses in both directions, their bodies and futures. An incoming request wraps Node.js's
// IncomingMessage; the response the guest sets is written to the ServerResponse; an outgoing
// request is sent with node:http / node:https. Plain JavaScript, typed with JSDoc.
import { isIP } from 'node:net';
import { allowsDestination, allowsRelative } from '../../outbound-hosts.mjs';
import { BodyOutput, IoError, Pollable, ReadableInput } from './streams.mjs';
/** @import { IncomingMessage } from 'node:http' */

// Not ES imports: node:http's namespace loads Node's bundled undici (eslint.config.js says why).
const http = process.getBuiltinModule('node:http');
const https = process.getBuiltinModule('node:https');
/** @import { RouteClient } from '../service-route.mjs' */
/** @import { WorkerRoute } from '../../worker-protocol.ts' */
/** @import { OutboundPolicy } from '../../outbound-hosts.mjs' */
/**
 * The pod's allow-list for outgoing requests, and who is told of a refused one (a log line).
 * @typedef {{ policy: OutboundPolicy, denied: (url: string) => void }} OutboundCheck
 */

/** wasi:http's `header-error` cases. */
export const HEADER_ERROR = /** @type {const} */ ({ invalidSyntax: 0, forbidden: 1, immutable: 2 });

/**
 * wasi:http's `error-code`: the case's index in the variant, with the one payload the host
 * produces (an optional message: DNS-error's rcode, internal-error's text).
 * @typedef {{ tag: number, message?: string }} ErrorCode
 */
export const ERROR_CODE = /** @type {const} */ ({
  dnsTimeout: 0,
  dnsError: 1,
  destinationNotFound: 2,
  destinationUnavailable: 3,
  connectionRefused: 6,
  connectionTerminated: 7,
  connectionTimeout: 8,
  connectionReadTimeout: 9,
  httpRequestDenied: 15,
  httpRequestUriInvalid: 19,
  httpResponseIncomplete: 25,
  httpResponseTimeout: 33,
  httpProtocolError: 35,
  internalError: 38,
});

/** The methods of wasi:http's `method` variant, by case index (`other` is 9). */
export const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'CONNECT', 'OPTIONS', 'TRACE', 'PATCH'];

/**
 * Headers a guest may not set (hop-by-hop and connection-level ones; wasmtime refuses the same
 * with `forbidden`): the host manages the connection.
 */
const FORBIDDEN = new Set([
  'connection',
  'keep-alive',
  'proxy-authenticate',
  'proxy-authorization',
  'proxy-connection',
  'te',
  'transfer-encoding',
  'upgrade',
  'host',
  'http2-settings',
]);
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

/** A header name is a token; a value has no CR, LF or NUL. @param {string} name @param {Uint8Array} [value] */
export function headerError(name, value) {
  if (!TOKEN.test(name)) return HEADER_ERROR.invalidSyntax;
  if (value && (value.includes(13) || value.includes(10) || value.includes(0))) return HEADER_ERROR.invalidSyntax;
  if (FORBIDDEN.has(name.toLowerCase())) return HEADER_ERROR.forbidden;
  return undefined;
}

/** wasi:http's `fields` (headers or trailers): names as given, compared without case. */
export class Fields {
  /** @param {Array<[string, Uint8Array]>} [entries] @param {boolean} [immutable] */
  constructor(entries = [], immutable = false) {
    this.entries = entries;
    this.immutable = immutable;
  }
  /** @param {IncomingMessage} msg @returns {Fields} the message's headers, immutable */
  static ofMessage(msg) {
    /** @type {Array<[string, Uint8Array]>} */
    const entries = [];
    const raw = msg.rawHeaders;
    for (let i = 0; i < raw.length; i += 2)
      entries.push([/** @type {string} */ (raw[i]).toLowerCase(), Buffer.from(/** @type {string} */ (raw[i + 1]), 'latin1')]);
    return new Fields(entries, true);
  }
  /** @param {string} name */
  get(name) {
    const n = name.toLowerCase();
    return this.entries.filter(([k]) => k.toLowerCase() === n).map(([, v]) => v);
  }
  /** @param {string} name */
  delete(name) {
    const n = name.toLowerCase();
    this.entries = this.entries.filter(([k]) => k.toLowerCase() !== n);
  }
  /** As Node.js takes them: name → value or values. */
  toNode() {
    /** @type {Record<string, string | string[]>} */
    const out = {};
    for (const [k, v] of this.entries) {
      const s = Buffer.from(v).toString('latin1');
      const prev = out[k];
      out[k] = prev === undefined ? s : Array.isArray(prev) ? [...prev, s] : [prev, s];
    }
    return out;
  }
}

/** wasi:http's `incoming-body`: a body being received, read through one input stream. */
export class IncomingBody {
  /** @param {import('node:stream').Readable} source */
  constructor(source) {
    this.input = new ReadableInput(source);
    this.streamTaken = false;
  }
}

/** wasi:http's `future-trailers`: ready once the body was read to its end (no trailers are passed on). */
export class FutureTrailers {
  /** @param {IncomingBody} body */
  constructor(body) {
    this.body = body;
    this.taken = false;
  }
  pollable() {
    const input = this.body.input;
    return new Pollable(
      () => input.ready(),
      () => input.wait(),
    );
  }
}

/** wasi:http's `incoming-request`: what the server received. */
export class IncomingRequest {
  /** @param {IncomingMessage} req @param {{ host: string, port: number }} listen where it was received (the authority without a Host header) */
  constructor(req, listen) {
    this.req = req;
    this.listen = listen;
    this.method = req.method ?? 'GET';
    this.pathWithQuery = req.url ?? '/';
    /** @type {Fields | undefined} */
    this.headersCache = undefined;
    /** @type {IncomingBody | undefined} */
    this.body = undefined;
    this.consumed = false;
  }
  headers() {
    return (this.headersCache ??= Fields.ofMessage(this.req));
  }
  /** The Host header, or the address the request came to. */
  get authority() {
    return this.req.headers.host ?? `${this.listen.host}:${this.listen.port}`;
  }
}

/** wasi:http's `outgoing-body`: a body the guest writes (a response's or an outgoing request's). */
export class OutgoingBody {
  constructor() {
    this.output = new BodyOutput();
    this.streamTaken = false;
  }
}

/** wasi:http's `outgoing-response`: the response the guest builds. */
export class OutgoingResponse {
  /** @param {Fields} headers */
  constructor(headers) {
    this.status = 200;
    this.headers = headers;
    this.body = new OutgoingBody();
    this.bodyTaken = false;
  }
}

/**
 * wasi:http's `response-outparam`: where the guest sets its response (or an error). `onSet` is
 * called once with what was set.
 */
export class ResponseOutparam {
  /** @param {(r: { response: OutgoingResponse } | { error: ErrorCode }) => void} onSet */
  constructor(onSet) {
    this.onSet = onSet;
  }
}

/** wasi:http's `request-options`: timeouts of an outgoing request (ns), unset by default. */
export class RequestOptions {
  /** @type {bigint | undefined} */ connectTimeout;
  /** @type {bigint | undefined} */ firstByteTimeout;
  /** @type {bigint | undefined} */ betweenBytesTimeout;
}

/** wasi:http's `outgoing-request`: a request the guest builds and sends with outgoing-handler. */
export class OutgoingRequest {
  /** @param {Fields} headers */
  constructor(headers) {
    /** @type {{ tag: number, other?: string }} */
    this.method = { tag: 0 };
    /** @type {{ tag: number, other?: string } | undefined} */
    this.scheme = undefined;
    /** @type {string | undefined} */
    this.authority = undefined;
    /** @type {string | undefined} */
    this.pathWithQuery = undefined;
    this.headers = headers;
    this.body = new OutgoingBody();
    this.bodyTaken = false;
  }
}

/** wasi:http's `incoming-response`: the answer to an outgoing request. */
export class IncomingResponse {
  /** @param {IncomingMessage} res */
  constructor(res) {
    this.status = res.statusCode ?? 0;
    this.headers = Fields.ofMessage(res);
    this.body = new IncomingBody(res);
    this.consumed = false;
  }
}

/** wasi:http's `future-incoming-response`: an outgoing request in flight. */
export class FutureIncomingResponse {
  /** @type {{ response: IncomingResponse } | { error: ErrorCode } | undefined} */
  outcome = undefined;
  taken = false;
  /** @type {Promise<void>} */
  done;
  /** @param {OutgoingRequest} req @param {RequestOptions | undefined} opts @param {RouteClient} [route] @param {OutboundCheck} [outbound] */
  constructor(req, opts, route, outbound) {
    this.done = send(req, opts, route, outbound).then((outcome) => {
      this.outcome = outcome;
    });
  }
  pollable() {
    return new Pollable(
      () => this.outcome !== undefined,
      () => this.done,
    );
  }
}

/**
 * True when the allow-list refuses `req` (told to `outbound.denied`): `outgoing-handler.handle`
 * then returns HTTP-request-denied itself, as wasmtime's wasi-http in Spin does, and the body the
 * guest writes afterwards is discarded, so a Spin SDK (which writes the body after `handle`) gets
 * HTTP-request-denied, not a failed body stream. A relative request (no authority) is left to
 * {@link send}.
 * @param {OutgoingRequest} req @param {OutboundCheck} outbound @returns {boolean}
 */
export function deniedByPolicy(req, outbound) {
  if (!req.authority || (req.scheme !== undefined && req.scheme.tag > 1)) return false;
  const scheme = req.scheme?.tag === 1 ? 'https' : 'http';
  let url;
  try {
    url = new URL(`${scheme}://${req.authority}`);
  } catch {
    return false;
  }
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (allowsDestination(outbound.policy, { scheme, host, port: Number(url.port || (scheme === 'https' ? 443 : 80)) })) return false;
  outbound.denied(`${scheme}://${req.authority}`);
  return true;
}

/**
 * Sends `req` with node:http(s); the guest's body (written before or after) streams to it. With
 * `route`, the node's Service resolver says where to connect first (a ClusterIP or a Service name
 * to an endpoint; no endpoint: connection-refused at once, as kube-proxy rejects); the request
 * keeps its authority as `Host` (and as the TLS server name), as through kube-proxy.
 * With `outbound`, a request outside the pod's allow-list fails with HTTP-request-denied before
 * anything is sent (as Spin refuses it).
 * @param {OutgoingRequest} req
 * @param {RequestOptions | undefined} opts
 * @param {RouteClient} [route]
 * @param {OutboundCheck} [outbound]
 * @returns {Promise<{ response: IncomingResponse } | { error: ErrorCode }>}
 */
async function send(req, opts, route, outbound) {
  const https_ = req.scheme?.tag === 1;
  if (req.scheme !== undefined && req.scheme.tag > 1)
    return { error: { tag: ERROR_CODE.httpProtocolError, message: `unsupported scheme ${req.scheme.other}` } };
  const scheme = https_ ? 'https' : 'http';
  if (!req.authority) {
    // A request to the app itself (Spin's relative URL): denied unless a `self` entry allows it; nodelet sends none.
    if (outbound && !allowsRelative(outbound.policy, [scheme])) {
      outbound.denied(`${scheme}:// (no authority)`);
      return { error: { tag: ERROR_CODE.httpRequestDenied } };
    }
    return { error: { tag: ERROR_CODE.httpRequestUriInvalid } };
  }
  let url;
  try {
    url = new URL(`${https_ ? 'https' : 'http'}://${req.authority}`);
  } catch {
    return { error: { tag: ERROR_CODE.httpRequestUriInvalid } };
  }
  const hostname = url.hostname.replace(/^\[|\]$/g, '');
  let target = { host: hostname, port: Number(url.port || (https_ ? 443 : 80)) };
  if (outbound && !allowsDestination(outbound.policy, { scheme, ...target })) {
    outbound.denied(`${scheme}://${req.authority}`);
    req.body.output.fail('the request was denied');
    return { error: { tag: ERROR_CODE.httpRequestDenied } };
  }
  if (route) {
    const r = await route.route(target.host, target.port);
    if (r.kind !== 'connect') {
      req.body.output.fail(r.message);
      return { error: routeError(r) };
    }
    target = { host: r.host, port: r.port };
  }
  return new Promise((resolve) => {
    const method = req.method.tag === 9 ? /** @type {string} */ (req.method.other) : /** @type {string} */ (METHODS[req.method.tag]);
    const ms = (/** @type {bigint | undefined} */ ns) => (ns === undefined ? undefined : Math.max(1, Number(ns / 1_000_000n)));
    const out = (https_ ? https : http).request({
      host: target.host,
      port: target.port,
      method,
      path: req.pathWithQuery ?? '/',
      headers: { ...req.headers.toNode(), host: req.authority },
      timeout: ms(opts?.connectTimeout ?? opts?.firstByteTimeout),
      ...(https_ && target.host !== hostname && !isIP(hostname) ? { servername: hostname } : {}),
    });
    out.on('response', (res) => {
      out.setTimeout(0);
      resolve({ response: new IncomingResponse(res) });
    });
    out.on('timeout', () => {
      resolve({ error: { tag: ERROR_CODE.connectionTimeout } });
      out.destroy();
    });
    out.on('error', (/** @type {NodeJS.ErrnoException} */ e) => {
      req.body.output.fail(e.message);
      resolve({ error: errorCodeOf(e) });
    });
    req.body.output.attach(out);
  });
}

/**
 * The error-code of a route that connects nowhere: no ready endpoint → connection-refused (as
 * kube-proxy's REJECT), endpoints unknown → destination-unavailable, no such cluster name →
 * DNS-error, no answer → internal-error.
 * @param {Exclude<WorkerRoute, { kind: 'connect' }>} r
 * @returns {ErrorCode}
 */
export function routeError(r) {
  switch (r.kind) {
    case 'refused':
      return { tag: ERROR_CODE.connectionRefused };
    case 'unavailable':
      return { tag: ERROR_CODE.destinationUnavailable };
    case 'not-found':
      return { tag: ERROR_CODE.dnsError, message: 'NXDOMAIN' };
    default:
      return { tag: ERROR_CODE.internalError, message: r.message };
  }
}

/** The error-code of a failed outgoing request. @param {NodeJS.ErrnoException} e @returns {ErrorCode} */
function errorCodeOf(e) {
  switch (e.code) {
    case 'ECONNREFUSED':
      return { tag: ERROR_CODE.connectionRefused };
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return { tag: ERROR_CODE.dnsError, message: e.code === 'ENOTFOUND' ? 'address not available' : 'temporary failure' };
    case 'ETIMEDOUT':
      return { tag: ERROR_CODE.connectionTimeout };
    case 'ECONNRESET':
    case 'EPIPE':
      return { tag: ERROR_CODE.connectionTerminated };
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return { tag: ERROR_CODE.destinationUnavailable };
    default:
      return { tag: ERROR_CODE.internalError, message: e.message };
  }
}

export { IoError };
