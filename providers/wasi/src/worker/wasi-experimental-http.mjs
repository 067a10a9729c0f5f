// Krustlet's `wasi_experimental_http` host functions for preview1 modules
// (deislabs/wasi-experimental-http, the Rust crate `wasi-experimental-http`
// 0.10 and its AssemblyScript/C ports), run inside the container's worker.
// Plain JavaScript: workers start without a TypeScript loader (see README.md);
// typed with JSDoc.
// Hand-written: the host side exists only for wasmtime (Rust); this follows its
// signatures, error codes and allow-list semantics.
//
// Imports (all return an HttpError code, 0 = success):
//   req(url_ptr, url_len, method_ptr, method_len, headers_ptr, headers_len,
//       body_ptr, body_len, status_code_ptr: *u16, handle_ptr: *u32)
//   close(handle)
//   header_get(handle, name_ptr, name_len, value_ptr, value_len, written_ptr: *u32)
//   headers_get_all(handle, buf_ptr, buf_len, written_ptr: *u32)      "name:value\n" lines
//   body_read(handle, buf_ptr, buf_len, read_ptr: *u32)                0 bytes read: the end
//
// `req` returns a Promise (the worker makes it a WebAssembly.Suspending import,
// see jspi.mjs): the request runs on the worker's event loop while the module
// waits. The whole response body is read before `req` returns, as wasmtime's
// host does (bounded here by MAX_BODY_BYTES).
//
// Allowed destinations (the pod annotation alpha.wasi.krustlet.dev/allowed-domains,
// parsed by the provider): a URL's host must equal the host of one of the listed
// URLs (scheme and port are not compared, as in wasmtime's is_allowed);
// "insecure:allow-all" allows every host; no annotation allows none. A refused
// request fails with DESTINATION_NOT_ALLOWED before anything is sent.
// Redirects are not followed (the module sees the 3xx response).
//
// Where a request connects: with the container's route port (cluster mode), the node's Service
// resolver answers first (service-route.mjs): a ClusterIP or a Service name goes to a ready
// endpoint, keeping the URL's host as `Host`; no ready endpoint fails the request at once with
// REQUEST_ERROR (the crate's only code for a failed connection). The allow-list is checked on
// the URL's host as written, before that.

import { allowsUrl } from '../outbound-hosts.mjs';
/** @import { RouteClient } from './service-route.mjs' */
/** @import { OutboundPolicy } from '../outbound-hosts.mjs' */

/** The crate's error codes (wasi_experimental_http.witx). */
export const HTTP_ERROR = {
  SUCCESS: 0,
  INVALID_HANDLE: 1,
  MEMORY_NOT_FOUND: 2,
  MEMORY_ACCESS_ERROR: 3,
  BUFFER_TOO_SMALL: 4,
  HEADER_NOT_FOUND: 5,
  UTF_8_ERROR: 6,
  DESTINATION_NOT_ALLOWED: 7,
  INVALID_METHOD: 8,
  INVALID_ENCODING: 9,
  INVALID_URL: 10,
  REQUEST_ERROR: 11,
  RUNTIME_ERROR: 12,
  TOO_MANY_SESSIONS: 13,
};

/** The functions of module `wasi_experimental_http`. */
export const EXPERIMENTAL_HTTP_FUNCTIONS = ['req', 'close', 'header_get', 'headers_get_all', 'body_read'];
/** Those that may return a Promise. */
export const EXPERIMENTAL_HTTP_ASYNC = ['req'];
/** The allow-list entry that allows every host (as in wasmtime's host). */
export const ALLOW_ALL_HOSTS = 'insecure:allow-all';
/** A response body larger than this fails the request with REQUEST_ERROR. */
export const MAX_BODY_BYTES = 64 * 1024 * 1024;

const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * A response the module reads by its handle.
 * @typedef {{ status: number, headers: Array<[string, string]>, body: Buffer }} HttpResponse
 */

class HttpFailure extends Error {
  /** @param {number} code the HTTP_ERROR the call answers */
  constructor(code) {
    super(`wasi_experimental_http error ${code}`);
    this.code = code;
  }
}
/**
 * @param {number} code
 * @returns {never}
 */
const fail = (code) => {
  throw new HttpFailure(code);
};

/**
 * Whether `url` may be requested under `allowed` (null: nothing is).
 * Throws HttpFailure(INVALID_URL) for a URL (or a listed entry) that does not parse.
 * @param {string} url
 * @param {readonly string[] | null} allowed
 */
export function isAllowed(url, allowed) {
  /** @type {string} */
  let host;
  try {
    host = new URL(url).hostname;
  } catch {
    fail(HTTP_ERROR.INVALID_URL);
  }
  if (host === '') fail(HTTP_ERROR.INVALID_URL);
  if (allowed === null) return false;
  if (allowed.includes(ALLOW_ALL_HOSTS)) return true;
  return allowed.some((a) => {
    try {
      return new URL(a).hostname === host;
    } catch {
      return fail(HTTP_ERROR.INVALID_URL);
    }
  });
}

/**
 * The `wasi_experimental_http` import object for one container.
 * @param {() => WebAssembly.Memory} mem
 * @param {{ readonly allowedHosts: readonly string[] | null, readonly maxConcurrentRequests?: number, readonly outbound?: OutboundPolicy }} config
 *   outbound: the pod's wasi.nodelet.dev/allowed-outbound-hosts, checked after Krustlet's list
 * @param {Promise<never>} stopped rejects (StoppedError) when the container is being stopped
 * @param {RouteClient} [route] where requests connect (the node's Services); as given without it
 * @returns {Record<string, (...args: number[]) => number | Promise<number>>}
 */
export function experimentalHttpImports(mem, config, stopped, route) {
  /** @type {Map<number, { headers: Array<[string, string]>, body: Buffer, pos: number }>} handle -> the response and how far its body was read */
  const responses = new Map();
  let current = 0;
  stopped.catch(() => {});

  const u8 = () => new Uint8Array(mem().buffer);
  const bytes = (/** @type {number} */ ptr, /** @type {number} */ len) => {
    const m = u8();
    if (ptr + len > m.length) fail(HTTP_ERROR.MEMORY_ACCESS_ERROR);
    return m.subarray(ptr, ptr + len);
  };
  const text = (/** @type {number} */ ptr, /** @type {number} */ len) => {
    try {
      return utf8.decode(bytes(ptr, len));
    } catch (e) {
      if (e instanceof HttpFailure) throw e;
      return fail(HTTP_ERROR.UTF_8_ERROR);
    }
  };
  const write = (/** @type {number} */ ptr, /** @type {Uint8Array} */ data) => {
    const m = u8();
    if (ptr + data.length > m.length) fail(HTTP_ERROR.MEMORY_ACCESS_ERROR);
    m.set(data, ptr);
  };
  const writeU32 = (/** @type {number} */ ptr, /** @type {number} */ v) => write(ptr, new Uint8Array(Uint32Array.of(v).buffer));
  /**
   * Runs one call: its HTTP_ERROR code (SUCCESS when it returns nothing), at once or once its promise settles.
   * @param {() => number | void | Promise<number>} fn
   * @returns {number | Promise<number>}
   */
  const guard = (fn) => {
    try {
      const r = fn();
      return r instanceof Promise ? r.catch(code) : (r ?? HTTP_ERROR.SUCCESS);
    } catch (e) {
      return code(e);
    }
  };
  /**
   * @param {unknown} e
   * @returns {number}
   */
  const code = (e) => {
    if (e instanceof HttpFailure) return e.code;
    if (e instanceof RangeError) return HTTP_ERROR.MEMORY_ACCESS_ERROR;
    throw e; // StoppedError and the like unwind the module
  };
  const response = (/** @type {number} */ handle) => responses.get(handle >>> 0) ?? fail(HTTP_ERROR.INVALID_HANDLE);

  return {
    req: (urlPtr, urlLen, methodPtr, methodLen, headersPtr, headersLen, bodyPtr, bodyLen, statusPtr, handlePtr) =>
      guard(() => {
        const max = config.maxConcurrentRequests;
        if (max !== undefined && responses.size > max - 1) fail(HTTP_ERROR.TOO_MANY_SESSIONS);
        const url = text(urlPtr, urlLen);
        if (!isAllowed(url, config.allowedHosts)) fail(HTTP_ERROR.DESTINATION_NOT_ALLOWED);
        if (config.outbound && !allowsUrl(config.outbound, url, 'http')) fail(HTTP_ERROR.DESTINATION_NOT_ALLOWED);
        const method = text(methodPtr, methodLen);
        if (!TOKEN.test(method)) fail(HTTP_ERROR.INVALID_METHOD);
        const body = Buffer.from(bytes(bodyPtr, bodyLen));
        const headers = parseHeaders(text(headersPtr, headersLen));
        const target = new URL(url);
        if (target.protocol !== 'http:' && target.protocol !== 'https:') fail(HTTP_ERROR.INVALID_URL);
        return Promise.race([stopped, send(target, method, headers, body, route)]).then((/** @type {HttpResponse} */ res) => {
          const view = new DataView(mem().buffer);
          if (statusPtr + 2 > view.byteLength) fail(HTTP_ERROR.MEMORY_ACCESS_ERROR);
          view.setUint16(statusPtr, res.status, true);
          const start = current;
          while (responses.has(current)) {
            current = (current + 1) >>> 0;
            if (current === start) fail(HTTP_ERROR.TOO_MANY_SESSIONS);
          }
          responses.set(current, { headers: res.headers, body: res.body, pos: 0 });
          writeU32(handlePtr, current);
          return HTTP_ERROR.SUCCESS;
        });
      }),
    close: (handle) =>
      guard(() => {
        responses.delete(handle >>> 0);
      }),
    header_get: (handle, namePtr, nameLen, valuePtr, valueLen, writtenPtr) =>
      guard(() => {
        const r = response(handle);
        const name = text(namePtr, nameLen).toLowerCase();
        const found = r.headers.find(([k]) => k === name) ?? fail(HTTP_ERROR.HEADER_NOT_FOUND);
        const value = Buffer.from(found[1], 'latin1');
        if (value.length > valueLen) fail(HTTP_ERROR.BUFFER_TOO_SMALL);
        write(valuePtr, value);
        writeU32(writtenPtr, value.length);
      }),
    headers_get_all: (handle, bufPtr, bufLen, writtenPtr) =>
      guard(() => {
        const r = response(handle);
        const all = Buffer.from(r.headers.map(([k, v]) => `${k}:${v}\n`).join(''), 'latin1');
        if (all.length > bufLen) fail(HTTP_ERROR.BUFFER_TOO_SMALL);
        write(bufPtr, all);
        writeU32(writtenPtr, all.length);
      }),
    body_read: (handle, bufPtr, bufLen, readPtr) =>
      guard(() => {
        const r = response(handle);
        const n = Math.min(bufLen >>> 0, r.body.length - r.pos);
        write(bufPtr, r.body.subarray(r.pos, r.pos + n));
        r.pos += n;
        writeU32(readPtr, n);
      }),
  };
}

/**
 * "name:value\n" lines, as the crate encodes a header map (the value is taken as is).
 * @param {string} s
 * @returns {Array<[string, string]>}
 */
function parseHeaders(s) {
  /** @type {Array<[string, string]>} */
  const out = [];
  for (const line of s.split('\n')) {
    if (line === '') continue;
    const i = line.indexOf(':');
    if (i <= 0) fail(HTTP_ERROR.INVALID_ENCODING);
    const name = line.slice(0, i);
    const value = line.slice(i + 1);
    if (!TOKEN.test(name) || /[\0\r\n]/.test(value)) fail(HTTP_ERROR.INVALID_ENCODING);
    out.push([name, value]);
  }
  return out;
}

/**
 * One request with node:http(s) (loaded on first use: a worker's heap is small), connecting where
 * `route` says (see the module comment).
 * @param {URL} url
 * @param {string} method
 * @param {Array<[string, string]>} headers
 * @param {Buffer} body
 * @param {RouteClient} [route]
 * @returns {Promise<HttpResponse>}
 */
async function send(url, method, headers, body, route) {
  const https = url.protocol === 'https:';
  const lib = https ? await import('node:https') : await import('node:http');
  const hostname = url.hostname.replace(/^\[|\]$/g, '');
  let target = { host: hostname, port: Number(url.port || (https ? 443 : 80)) };
  if (route) {
    const r = await route.route(target.host, target.port);
    if (r.kind !== 'connect') throw new HttpFailure(HTTP_ERROR.REQUEST_ERROR);
    target = r;
  }
  return new Promise((resolve, reject) => {
    /** @type {Record<string, string | string[]>} */
    const h = {};
    for (const [k, v] of headers) {
      const had = Object.hasOwn(h, k) ? h[k] : undefined; // own: a header named like an Object.prototype member is a header
      h[k] = had === undefined ? v : [...(Array.isArray(had) ? had : [had]), v];
    }
    if (body.length > 0 || !['GET', 'HEAD'].includes(method)) h['content-length'] = String(body.length);
    if (!Object.keys(h).some((k) => k.toLowerCase() === 'host')) h.host = url.host;
    const tls = https && target.host !== hostname && !/^[\d.]+$|:/.test(hostname) ? { servername: hostname } : {};
    const at = { protocol: url.protocol, host: target.host, port: target.port, path: `${url.pathname}${url.search}`, ...tls };
    const req = lib.request({ ...at, method, headers: h, agent: false }, (res) => {
      /** @type {Buffer[]} */
      const chunks = [];
      let size = 0;
      res.on('data', (/** @type {Buffer} */ c) => {
        size += c.length;
        if (size > MAX_BODY_BYTES) {
          req.destroy();
          reject(new HttpFailure(HTTP_ERROR.REQUEST_ERROR));
        } else chunks.push(c);
      });
      res.on('end', () => {
        /** @type {Array<[string, string]>} */
        const pairs = [];
        for (let i = 0; i < res.rawHeaders.length; i += 2) pairs.push([res.rawHeaders[i].toLowerCase(), res.rawHeaders[i + 1]]);
        resolve({ status: res.statusCode ?? 0, headers: pairs, body: Buffer.concat(chunks, size) });
      });
      res.on('error', () => reject(new HttpFailure(HTTP_ERROR.REQUEST_ERROR)));
    });
    req.on('error', () => reject(new HttpFailure(HTTP_ERROR.REQUEST_ERROR)));
    req.end(body);
  });
}
