// The core-level imports of wasi:http/types and wasi:http/outgoing-handler for one instance (see
// canon.mjs for the conventions; http-types.mjs for the resources). Memory layouts, from the
// canonical ABI: `error-code` is 32 bytes aligned to 8 (case at +0, payload at +8); a result or
// option puts its payload at the payload's alignment (4 for handles and strings, 8 around an
// error-code). Plain JavaScript, typed with JSDoc.
import { Writable } from 'node:stream';
import { HostTrap } from './canon.mjs';
import {
  deniedByPolicy,
  ERROR_CODE,
  Fields,
  FutureIncomingResponse,
  FutureTrailers,
  headerError,
  HEADER_ERROR,
  IncomingBody,
  IncomingRequest,
  IncomingResponse,
  IoError,
  METHODS,
  OutgoingBody,
  OutgoingRequest,
  OutgoingResponse,
  RequestOptions,
  ResponseOutparam,
} from './http-types.mjs';
import { OutputStream, InputStream } from './streams.mjs';
/** @import { Guest } from './canon.mjs' */
/** @import { ErrorCode } from './http-types.mjs' */
/** @import { CoreFunction } from './imports-io.mjs' */
/** @import { RouteClient } from '../service-route.mjs' */
/** @import { OutboundCheck } from './http-types.mjs' */

/**
 * @param {Guest} g
 * @param {RouteClient} [route] where outgoing requests connect (the node's Services); as given without it
 * @param {OutboundCheck} [outbound] the pod's allow-list; everything allowed without it
 * @returns {Record<string, CoreFunction>}
 */
export function httpImports(g, route, outbound) {
  const T = g.table;
  const dv = () => g.view();
  /** Stores `result<own<T>>` / `result<own<T>, header-error>` (payload at +4). @param {number} ret @param {number | undefined} handle @param {number} [err] */
  const handleResult = (ret, handle, err = 0) => {
    const v = dv();
    if (handle === undefined) {
      v.setUint8(ret, 1);
      v.setUint8(ret + 4, err);
    } else {
      v.setUint8(ret, 0);
      v.setUint32(ret + 4, handle, true);
    }
  };
  /** `result<_, header-error>`: the error at +1. @param {number} ret @param {number | undefined} err */
  const unitHeaderResult = (ret, err) => {
    const v = dv();
    v.setUint8(ret, err === undefined ? 0 : 1);
    if (err !== undefined) v.setUint8(ret + 1, err);
  };
  /** Stores an error-code at `at`. @param {number} at @param {ErrorCode} e */
  const storeErrorCode = (at, e) => {
    dv().setUint8(at, e.tag);
    if (e.tag === ERROR_CODE.dnsError) {
      g.putOptionString(at + 8, e.message);
      dv().setUint8(at + 20, 0);
    } else if (e.tag === ERROR_CODE.internalError) g.putOptionString(at + 8, e.message);
  };
  /** @param {number} ret @param {{ tag: number, other?: string }} m */
  const storeMethod = (ret, m) => {
    dv().setUint8(ret, m.tag);
    if (m.tag === 9) {
      const [p, l] = g.putString(/** @type {string} */ (m.other));
      g.putPtrLen(ret + 4, p, l);
    }
  };
  /** option<scheme>: tag, then the scheme's case at +4 and other's string at +8. @param {number} ret @param {{ tag: number, other?: string } | undefined} s */
  const storeScheme = (ret, s) => {
    dv().setUint8(ret, s ? 1 : 0);
    if (!s) return;
    dv().setUint8(ret + 4, s.tag);
    if (s.tag === 2) {
      const [p, l] = g.putString(/** @type {string} */ (s.other));
      g.putPtrLen(ret + 8, p, l);
    }
  };
  /** @param {number} tag @param {number} ptr @param {number} len */
  const variant = (tag, ptr, len) => (tag === 9 || tag === 2 ? { tag, other: g.string(ptr, len) } : { tag });
  /** @param {number} self @returns {Fields} a fields the guest may change */
  const mutable = (self) => {
    const f = T.get(self, Fields);
    return f;
  };
  /** option<u64> at ret (value at +8). @param {number} ret @param {bigint | undefined} v */
  const storeOptionU64 = (ret, v) => {
    dv().setUint8(ret, v === undefined ? 0 : 1);
    if (v !== undefined) dv().setBigUint64(ret + 8, v, true);
  };
  /** @param {'connectTimeout' | 'firstByteTimeout' | 'betweenBytesTimeout'} key */
  const timeout = (key) => ({
    get: (/** @type {number} */ self, /** @type {number} */ ret) => storeOptionU64(ret, T.get(self, RequestOptions)[key]),
    set: (/** @type {number} */ self, /** @type {number} */ some, /** @type {bigint} */ v) => {
      T.get(self, RequestOptions)[key] = some ? BigInt.asUintN(64, v) : undefined;
      return 0;
    },
  });
  const connect = timeout('connectTimeout');
  const firstByte = timeout('firstByteTimeout');
  const between = timeout('betweenBytesTimeout');
  /**
   * option<result<result<T, error-code>>> of a future at ret: none while pending; Some(Err) once taken.
   * @param {number} ret @param {boolean} pending @param {boolean} taken
   * @param {() => ({ ok: (at: number) => void } | { error: ErrorCode })} outcome
   */
  const storeFuture = (ret, pending, taken, outcome) => {
    const v = dv();
    if (pending) return v.setUint8(ret, 0);
    v.setUint8(ret, 1);
    if (taken) return v.setUint8(ret + 8, 1);
    v.setUint8(ret + 8, 0);
    const o = outcome();
    if ('ok' in o) {
      dv().setUint8(ret + 16, 0);
      o.ok(ret + 24);
    } else {
      dv().setUint8(ret + 16, 1);
      storeErrorCode(ret + 24, o.error);
    }
  };

  return {
    'wasi:http/types#[constructor]fields': () => T.add(new Fields()),
    'wasi:http/types#[static]fields.from-list': (ptr, len, ret) => {
      const entries = g.pairs(ptr, len);
      for (const [k, v] of entries) {
        const err = headerError(k, v);
        if (err !== undefined) return handleResult(ret, undefined, err);
      }
      return handleResult(ret, T.add(new Fields(entries)));
    },
    'wasi:http/types#[method]fields.get': (self, np, nl, ret) => {
      const values = T.get(self, Fields).get(g.string(np, nl));
      const base = g.alloc(4, values.length * 8);
      values.forEach((val, i) => {
        const [p, l] = g.putBytes(val);
        g.putPtrLen(base + i * 8, p, l);
      });
      g.putPtrLen(ret, base, values.length);
    },
    'wasi:http/types#[method]fields.has': (self, np, nl) => (T.get(self, Fields).get(g.string(np, nl)).length > 0 ? 1 : 0),
    'wasi:http/types#[method]fields.set': (self, np, nl, lp, ll, ret) => {
      const f = mutable(self);
      const name = g.string(np, nl);
      const values = Array.from({ length: ll }, (_, i) => g.bytes(dv().getUint32(lp + i * 8, true), dv().getUint32(lp + i * 8 + 4, true)));
      const err = f.immutable ? HEADER_ERROR.immutable : (headerError(name) ?? values.map((val) => headerError(name, val)).find((e) => e !== undefined));
      if (err === undefined) {
        f.delete(name);
        for (const val of values) f.entries.push([name, val]);
      }
      unitHeaderResult(ret, err);
    },
    'wasi:http/types#[method]fields.delete': (self, np, nl, ret) => {
      const f = mutable(self);
      const name = g.string(np, nl);
      const err = f.immutable ? HEADER_ERROR.immutable : headerError(name);
      if (err === undefined) f.delete(name);
      unitHeaderResult(ret, err);
    },
    'wasi:http/types#[method]fields.append': (self, np, nl, vp, vl, ret) => {
      const f = mutable(self);
      const name = g.string(np, nl);
      const value = g.bytes(vp, vl);
      const err = f.immutable ? HEADER_ERROR.immutable : headerError(name, value);
      if (err === undefined) f.entries.push([name, value]);
      unitHeaderResult(ret, err);
    },
    'wasi:http/types#[method]fields.entries': (self, ret) => g.putPairs(ret, T.get(self, Fields).entries),
    'wasi:http/types#[method]fields.clone': (self) => T.add(new Fields([...T.get(self, Fields).entries])),
    'wasi:http/types#[resource-drop]fields': (h) => void T.take(h, Fields),

    'wasi:http/types#[method]incoming-request.method': (self, ret) => {
      const m = T.get(self, IncomingRequest).method;
      const tag = METHODS.indexOf(m);
      storeMethod(ret, tag >= 0 ? { tag } : { tag: 9, other: m });
    },
    'wasi:http/types#[method]incoming-request.path-with-query': (self, ret) => g.putOptionString(ret, T.get(self, IncomingRequest).pathWithQuery),
    'wasi:http/types#[method]incoming-request.scheme': (self, ret) => {
      T.get(self, IncomingRequest);
      storeScheme(ret, { tag: 0 });
    },
    'wasi:http/types#[method]incoming-request.authority': (self, ret) => g.putOptionString(ret, T.get(self, IncomingRequest).authority),
    'wasi:http/types#[method]incoming-request.headers': (self) => T.add(T.get(self, IncomingRequest).headers()),
    'wasi:http/types#[method]incoming-request.consume': (self, ret) => {
      const r = T.get(self, IncomingRequest);
      if (r.consumed) return handleResult(ret, undefined);
      r.consumed = true;
      return handleResult(ret, T.add((r.body = new IncomingBody(r.req))));
    },
    'wasi:http/types#[resource-drop]incoming-request': (h) => void T.take(h, IncomingRequest),

    'wasi:http/types#[constructor]outgoing-request': (headers) => T.add(new OutgoingRequest(T.take(headers, Fields))),
    'wasi:http/types#[method]outgoing-request.body': (self, ret) => {
      const r = T.get(self, OutgoingRequest);
      if (r.bodyTaken) return handleResult(ret, undefined);
      r.bodyTaken = true;
      return handleResult(ret, T.add(r.body));
    },
    'wasi:http/types#[method]outgoing-request.method': (self, ret) => storeMethod(ret, T.get(self, OutgoingRequest).method),
    'wasi:http/types#[method]outgoing-request.set-method': (self, tag, p, l) => {
      T.get(self, OutgoingRequest).method = variant(tag, p, l);
      return 0;
    },
    'wasi:http/types#[method]outgoing-request.path-with-query': (self, ret) => g.putOptionString(ret, T.get(self, OutgoingRequest).pathWithQuery),
    'wasi:http/types#[method]outgoing-request.set-path-with-query': (self, some, p, l) => {
      T.get(self, OutgoingRequest).pathWithQuery = some ? g.string(p, l) : undefined;
      return 0;
    },
    'wasi:http/types#[method]outgoing-request.scheme': (self, ret) => storeScheme(ret, T.get(self, OutgoingRequest).scheme),
    'wasi:http/types#[method]outgoing-request.set-scheme': (self, some, tag, p, l) => {
      T.get(self, OutgoingRequest).scheme = some ? variant(tag, p, l) : undefined;
      return 0;
    },
    'wasi:http/types#[method]outgoing-request.authority': (self, ret) => g.putOptionString(ret, T.get(self, OutgoingRequest).authority),
    'wasi:http/types#[method]outgoing-request.set-authority': (self, some, p, l) => {
      T.get(self, OutgoingRequest).authority = some ? g.string(p, l) : undefined;
      return 0;
    },
    'wasi:http/types#[method]outgoing-request.headers': (self) => T.add(T.get(self, OutgoingRequest).headers),
    'wasi:http/types#[resource-drop]outgoing-request': (h) => void T.take(h, OutgoingRequest),

    'wasi:http/types#[constructor]request-options': () => T.add(new RequestOptions()),
    'wasi:http/types#[method]request-options.connect-timeout': connect.get,
    'wasi:http/types#[method]request-options.set-connect-timeout': connect.set,
    'wasi:http/types#[method]request-options.first-byte-timeout': firstByte.get,
    'wasi:http/types#[method]request-options.set-first-byte-timeout': firstByte.set,
    'wasi:http/types#[method]request-options.between-bytes-timeout': between.get,
    'wasi:http/types#[method]request-options.set-between-bytes-timeout': between.set,
    'wasi:http/types#[resource-drop]request-options': (h) => void T.take(h, RequestOptions),

    'wasi:http/types#[static]response-outparam.set': (param, isErr, a, b, c, d) => {
      const out = T.take(param, ResponseOutparam);
      if (!isErr) return out.onSet({ response: T.take(a, OutgoingResponse) });
      const message = a === ERROR_CODE.internalError && b !== 0n ? g.string(c, d) : undefined;
      return out.onSet({ error: { tag: a, message } });
    },
    'wasi:http/types#[method]response-outparam.send-informational': (self, _status, _headers, ret) => {
      T.get(self, ResponseOutparam);
      dv().setUint8(ret, 1);
      storeErrorCode(ret + 8, { tag: ERROR_CODE.internalError, message: 'informational responses are not sent' });
    },
    'wasi:http/types#[resource-drop]response-outparam': (h) => void T.take(h, ResponseOutparam),

    'wasi:http/types#[method]incoming-response.status': (self) => T.get(self, IncomingResponse).status,
    'wasi:http/types#[method]incoming-response.headers': (self) => T.add(T.get(self, IncomingResponse).headers),
    'wasi:http/types#[method]incoming-response.consume': (self, ret) => {
      const r = T.get(self, IncomingResponse);
      if (r.consumed) return handleResult(ret, undefined);
      r.consumed = true;
      return handleResult(ret, T.add(r.body));
    },
    'wasi:http/types#[resource-drop]incoming-response': (h) => void T.take(h, IncomingResponse),

    'wasi:http/types#[method]incoming-body.stream': (self, ret) => {
      const b = T.get(self, IncomingBody);
      if (b.streamTaken) return handleResult(ret, undefined);
      b.streamTaken = true;
      return handleResult(ret, T.add(b.input));
    },
    'wasi:http/types#[static]incoming-body.finish': (self) => T.add(new FutureTrailers(T.take(self, IncomingBody))),
    'wasi:http/types#[resource-drop]incoming-body': (h) => void T.take(h, IncomingBody),
    'wasi:http/types#[method]future-trailers.subscribe': (self) => T.add(T.get(self, FutureTrailers).pollable()),
    'wasi:http/types#[method]future-trailers.get': (self, ret) => {
      const f = T.get(self, FutureTrailers);
      const input = f.body.input;
      const taken = f.taken;
      if (input.ready()) f.taken = true;
      storeFuture(ret, !input.ready(), taken, () => ({ ok: (at) => dv().setUint8(at, 0) }));
    },
    'wasi:http/types#[resource-drop]future-trailers': (h) => void T.take(h, FutureTrailers),

    'wasi:http/types#[constructor]outgoing-response': (headers) => T.add(new OutgoingResponse(T.take(headers, Fields))),
    'wasi:http/types#[method]outgoing-response.status-code': (self) => T.get(self, OutgoingResponse).status,
    'wasi:http/types#[method]outgoing-response.set-status-code': (self, code) => {
      if (code < 100 || code > 999) return 1;
      T.get(self, OutgoingResponse).status = code;
      return 0;
    },
    'wasi:http/types#[method]outgoing-response.headers': (self) => T.add(T.get(self, OutgoingResponse).headers),
    'wasi:http/types#[method]outgoing-response.body': (self, ret) => {
      const r = T.get(self, OutgoingResponse);
      if (r.bodyTaken) return handleResult(ret, undefined);
      r.bodyTaken = true;
      return handleResult(ret, T.add(r.body));
    },
    'wasi:http/types#[resource-drop]outgoing-response': (h) => void T.take(h, OutgoingResponse),

    'wasi:http/types#[method]outgoing-body.write': (self, ret) => {
      const b = T.get(self, OutgoingBody);
      if (b.streamTaken) return handleResult(ret, undefined);
      b.streamTaken = true;
      return handleResult(ret, T.add(b.output));
    },
    'wasi:http/types#[static]outgoing-body.finish': (self, _hasTrailers, trailers, ret) => {
      const b = T.take(self, OutgoingBody);
      if (_hasTrailers) T.take(trailers, Fields);
      b.output.end();
      dv().setUint8(ret, 0);
    },
    'wasi:http/types#[resource-drop]outgoing-body': (h) => {
      const b = T.take(h, OutgoingBody);
      // Dropped without finish: the message is incomplete, the connection is cut.
      if (!b.output.ended) b.output.fail('the body was dropped before it was finished');
    },

    'wasi:http/types#[method]future-incoming-response.subscribe': (self) => T.add(T.get(self, FutureIncomingResponse).pollable()),
    'wasi:http/types#[method]future-incoming-response.get': (self, ret) => {
      const f = T.get(self, FutureIncomingResponse);
      const outcome = f.outcome;
      const taken = f.taken;
      if (outcome) f.taken = true;
      storeFuture(ret, outcome === undefined, taken, () => {
        const o = /** @type {NonNullable<typeof outcome>} */ (outcome);
        if ('error' in o) return { error: o.error };
        return { ok: (at) => dv().setUint32(at, T.add(o.response), true) };
      });
    },
    'wasi:http/types#[resource-drop]future-incoming-response': (h) => void T.take(h, FutureIncomingResponse),
    'wasi:http/types#http-error-code': (err, ret) => {
      T.get(err, IoError);
      dv().setUint8(ret, 0);
    },

    'wasi:http/outgoing-handler#handle': (req, hasOpts, opts, ret) => {
      const r = T.take(req, OutgoingRequest);
      const o = hasOpts ? T.take(opts, RequestOptions) : undefined;
      if (outbound && deniedByPolicy(r, outbound)) {
        // The body the guest still writes goes nowhere, as in wasmtime (a Spin SDK writes it, then reads the error).
        r.body.output.attach(new Writable({ write: (_c, _e, done) => done() }));
        dv().setUint8(ret, 1);
        storeErrorCode(ret + 8, { tag: ERROR_CODE.httpRequestDenied });
        return;
      }
      if (!r.bodyTaken) r.body.output.end();
      dv().setUint8(ret, 0);
      dv().setUint32(ret + 8, T.add(new FutureIncomingResponse(r, o, route, outbound)), true);
    },
  };
}

/** Resource types whose leftover handles hold something to release at the end of a request. */
export const STREAM_TYPES = [InputStream, OutputStream];
export { HostTrap };
