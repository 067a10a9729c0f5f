// What `wasi:keyvalue` (imports-keyvalue.mjs) and `fermyon:spin/key-value` (imports-spin-keyvalue.mjs)
// lower alike for an instance served per request (../http/canon.mjs): a store call's
// `result<T, error>` written at the guest's return pointer (the error a variant whose tags differ by
// interface), and the four key methods both resources have — get, set, delete, exists — over a
// handle's store. A store answering with a promise (Redis) makes the call return one (the imports
// are JSPI `Suspending`). Plain JavaScript, typed with JSDoc.
import { asKeyValueError, andThen } from '../../platform/keyvalue-store.mjs';
/** @import { Guest } from '../http/canon.mjs' */
/** @import { KeyValueBackend, KeyValueError, Maybe } from '../../platform/keyvalue-store.mjs' */

/**
 * Runs `op` and writes its value with `ok` (which writes the ok payload), or its error, as a result
 * at `ret` whose payload is at `ret + off`. Returns a promise when the store does.
 * @typedef {<V>(ret: number, off: number, op: () => Maybe<V>, ok: (v: V) => void) => Promise<void> | undefined} ResultWriter
 */

/**
 * Writes an interface's `error` variant (these tags; `other` carries a string) as a result's error at
 * `ret`, its payload at `ret + off`.
 * @param {Guest} g @param {Record<KeyValueError['kind'], number>} tags
 * @returns {(ret: number, off: number, e: KeyValueError) => void}
 */
export function errorWriter(g, tags) {
  return (ret, off, e) => {
    const dv = g.view();
    dv.setUint8(ret, 1);
    dv.setUint8(ret + off, tags[e.kind]);
    if (e.kind === 'other') {
      const [p, l] = g.putString(e.message);
      g.putPtrLen(ret + off + 4, p, l);
    }
  };
}

/**
 * The result writer of an interface whose `error` variant has these tags.
 * @param {Guest} g @param {Record<KeyValueError['kind'], number>} tags @returns {ResultWriter}
 */
export function resultWriter(g, tags) {
  const storeError = errorWriter(g, tags);
  return (ret, off, op, ok) => {
    /** @param {unknown} e */
    const fail = (e) => storeError(ret, off, asKeyValueError(e));
    try {
      const r = andThen(op, (v) => {
        g.view().setUint8(ret, 0);
        ok(v);
      });
      return r instanceof Promise ? r.catch(fail) : undefined;
    } catch (e) {
      fail(e);
      return undefined;
    }
  };
}

/** option<list<u8>> at `at`. @param {Guest} g @param {number} at @param {Uint8Array | undefined} v */
export function putOptionBytes(g, at, v) {
  if (v === undefined) return g.view().setUint8(at, 0);
  const [p, l] = g.putBytes(v);
  g.view().setUint8(at, 1);
  g.putPtrLen(at + 4, p, l);
}

/**
 * The lowerings of `get`, `set`, `delete` and `exists` on a resource whose handle `h` gives its store.
 * @param {Guest} g @param {(h: number) => { store: KeyValueBackend }} handle @param {ResultWriter} result
 */
export function keyMethods(g, handle, result) {
  return {
    /** @param {number} h @param {number} kp @param {number} kl @param {number} ret */
    get: (h, kp, kl, ret) => {
      const s = handle(h);
      const key = g.string(kp, kl);
      return result(
        ret,
        4,
        () => s.store.get(key),
        (val) => putOptionBytes(g, ret + 4, val),
      );
    },
    /** @param {number} h @param {number} kp @param {number} kl @param {number} vp @param {number} vl @param {number} ret */
    set: (h, kp, kl, vp, vl, ret) => {
      const s = handle(h);
      const key = g.string(kp, kl);
      const value = g.bytes(vp, vl);
      return result(
        ret,
        4,
        () => s.store.set(key, value),
        () => {},
      );
    },
    /** @param {number} h @param {number} kp @param {number} kl @param {number} ret */
    delete: (h, kp, kl, ret) => {
      const s = handle(h);
      const key = g.string(kp, kl);
      return result(
        ret,
        4,
        () => s.store.delete(key),
        () => {},
      );
    },
    /** @param {number} h @param {number} kp @param {number} kl @param {number} ret */
    exists: (h, kp, kl, ret) => {
      const s = handle(h);
      const key = g.string(kp, kl);
      return result(
        ret,
        4,
        () => s.store.exists(key),
        (yes) => g.view().setUint8(ret + 4, yes ? 1 : 0),
      );
    },
  };
}
