// `wasi:keyvalue` (store, atomics, batch) as core-level imports for one instance served per request
// (see ../http/canon.mjs), over the container's stores (../../platform/keyvalue-store.mjs). A store
// that answers with a promise (Redis) makes the call return one: these imports are JSPI
// `Suspending` (../http/host-imports.mjs), so only this instance waits.
//
// Two versions, two ABIs (WebAssembly/wasi-keyvalue):
//  - 0.2.0-draft (the repository's tag; wasmCloud): `increment` takes and returns a u64, the
//    `list-keys` cursor is an option<u64>, `get-many` returns list<option<tuple<string, list<u8>>>>;
//  - 0.2.0-draft2 (Spin 3, its WIT `keyvalue-2024-10-17`): `increment` is s64, the cursor an
//    option<string>, atomics adds `cas` and `swap`, and `get-many` returns
//    list<tuple<string, option<list<u8>>>> as Spin's WIT declares it (the repository's later text keeps
//    draft's shape under the same version; components built with Spin's SDKs use Spin's).
// Plain JavaScript, typed with JSDoc.
import { KEYVALUE_VERSIONS } from '../../platform/interface-versions.mjs';
import { asKeyValueError, andThen } from '../../platform/keyvalue-store.mjs';
import { errorWriter, keyMethods, putOptionBytes as putOptionBytesAt, resultWriter } from './keyvalue-lowering.mjs';
/** @import { Guest } from '../http/canon.mjs' */
/** @import { KeyValueBackend, KeyValueStores, Maybe } from '../../platform/keyvalue-store.mjs' */

/** A `bucket` handle: one store of the container. */
export class Bucket {
  /** @param {KeyValueBackend} store @param {string} label */
  constructor(store, label) {
    this.store = store;
    this.label = label;
  }
}

/** A `cas` handle (0.2.0-draft2): a key and the value it held when the handle was made. */
export class Cas {
  /** @param {Bucket} bucket @param {string} key @param {Uint8Array | undefined} current */
  constructor(bucket, key, current) {
    this.bucket = bucket;
    this.key = key;
    this.current = current;
  }
}

const ERROR_TAGS = { 'no-such-store': 0, 'access-denied': 1, other: 2 };

/**
 * @param {Guest} g
 * @param {() => KeyValueStores} stores the container's stores
 * @returns {Record<string, (...args: any[]) => unknown>} by `wasi:keyvalue/<interface>@<version>#<function>`
 */
export function keyvalueImports(g, stores) {
  const T = g.table;
  const storeError = errorWriter(g, ERROR_TAGS);
  const result = resultWriter(g, ERROR_TAGS);
  /** @param {number} at @param {Uint8Array | undefined} v */
  const putOptionBytes = (at, v) => putOptionBytesAt(g, at, v);
  /** list<string> at ptr/len. @param {number} ptr @param {number} len */
  const strings = (ptr, len) => {
    /** @type {string[]} */
    const out = [];
    for (let i = 0; i < len; i++) {
      const dv = g.view();
      out.push(g.string(dv.getUint32(ptr + i * 8, true), dv.getUint32(ptr + i * 8 + 4, true)));
    }
    return out;
  };
  /** @param {number} h */
  const bucket = (h) => T.get(h, Bucket);

  /** @type {Record<string, (...args: any[]) => unknown>} */
  const fns = {};
  for (const v of KEYVALUE_VERSIONS) {
    const draft2 = v === '0.2.0-draft2';
    const store = `wasi:keyvalue/store@${v}#`;
    const atomics = `wasi:keyvalue/atomics@${v}#`;
    const batch = `wasi:keyvalue/batch@${v}#`;
    fns[`${store}open`] = (/** @type {number} */ ptr, /** @type {number} */ len, /** @type {number} */ ret) => {
      const label = g.string(ptr, len);
      return result(
        ret,
        4,
        () => stores().open(label),
        (s) => g.view().setUint32(ret + 4, T.add(new Bucket(s, label)), true),
      );
    };
    fns[`${store}[resource-drop]bucket`] = (/** @type {number} */ h) => void T.take(h, Bucket);
    const keys = keyMethods(g, bucket, result);
    fns[`${store}[method]bucket.get`] = keys.get;
    fns[`${store}[method]bucket.set`] = keys.set;
    fns[`${store}[method]bucket.delete`] = keys.delete;
    fns[`${store}[method]bucket.exists`] = keys.exists;
    // key-response { keys: list<string>, cursor: option<u64> | option<string> }
    fns[`${store}[method]bucket.list-keys`] = draft2
      ? (/** @type {number} */ h, /** @type {number} */ tag, /** @type {number} */ cp, /** @type {number} */ cl, /** @type {number} */ ret) => {
          const b = bucket(h);
          const cursor = tag === 0 ? undefined : g.string(cp, cl);
          return result(
            ret,
            4,
            () => b.store.listKeys(cursor),
            (page) => {
              putStrings(g, ret + 4, page.keys);
              g.putOptionString(ret + 12, page.cursor);
            },
          );
        }
      : (/** @type {number} */ h, /** @type {number} */ tag, /** @type {bigint} */ c, /** @type {number} */ ret) => {
          const b = bucket(h);
          const cursor = tag === 0 ? undefined : BigInt.asUintN(64, c).toString();
          return result(
            ret,
            8,
            () => b.store.listKeys(cursor),
            (page) => {
              putStrings(g, ret + 8, page.keys);
              const dv = g.view();
              dv.setUint8(ret + 16, page.cursor === undefined ? 0 : 1);
              if (page.cursor !== undefined) dv.setBigUint64(ret + 24, BigInt.asUintN(64, BigInt(page.cursor)), true);
            },
          );
        };
    // increment: result<u64 | s64, error>, payload at ret+8.
    fns[`${atomics}increment`] = (
      /** @type {number} */ h,
      /** @type {number} */ kp,
      /** @type {number} */ kl,
      /** @type {bigint} */ delta,
      /** @type {number} */ ret,
    ) => {
      const b = bucket(h);
      const key = g.string(kp, kl);
      const d = draft2 ? BigInt.asIntN(64, delta) : BigInt.asUintN(64, delta);
      return result(
        ret,
        8,
        () => b.store.increment(key, d),
        (n) => g.view().setBigUint64(ret + 8, BigInt.asUintN(64, n), true),
      );
    };
    if (draft2) {
      fns[`${atomics}[static]cas.new`] = (/** @type {number} */ h, /** @type {number} */ kp, /** @type {number} */ kl, /** @type {number} */ ret) => {
        const b = bucket(h);
        const key = g.string(kp, kl);
        return result(
          ret,
          4,
          () => b.store.get(key),
          (cur) => g.view().setUint32(ret + 4, T.add(new Cas(b, key, cur)), true),
        );
      };
      fns[`${atomics}[method]cas.current`] = (/** @type {number} */ h, /** @type {number} */ ret) => {
        const c = T.get(h, Cas);
        g.view().setUint8(ret, 0);
        putOptionBytes(ret + 4, c.current);
      };
      fns[`${atomics}[resource-drop]cas`] = (/** @type {number} */ h) => void T.take(h, Cas);
      // swap: result<_, cas-error>; cas-error = variant { store-error(error), cas-failed(cas) } at ret+4.
      fns[`${atomics}swap`] = (/** @type {number} */ h, /** @type {number} */ vp, /** @type {number} */ vl, /** @type {number} */ ret) => {
        const c = T.take(h, Cas);
        const value = g.bytes(vp, vl);
        /** @param {unknown} e */
        const storeFailed = (e) => {
          storeError(ret + 4, 4, asKeyValueError(e));
          g.view().setUint8(ret, 1);
          g.view().setUint8(ret + 4, 0);
        };
        /** @param {boolean} swapped @returns {Maybe<void>} */
        const done = (swapped) => {
          if (swapped) {
            g.view().setUint8(ret, 0);
            return undefined;
          }
          // Failed: a new handle holding the value the key has now, for a retry.
          return andThen(
            () => c.bucket.store.get(c.key),
            (now) => {
              const dv = g.view();
              dv.setUint8(ret, 1);
              dv.setUint8(ret + 4, 1);
              dv.setUint32(ret + 8, T.add(new Cas(c.bucket, c.key, now)), true);
            },
          );
        };
        try {
          const r = andThen(() => c.bucket.store.swap(c.key, c.current, value), done);
          return r instanceof Promise ? r.catch(storeFailed) : undefined;
        } catch (e) {
          storeFailed(e);
          return undefined;
        }
      };
    }
    // get-many: result<list<E>, error>, E 20 bytes (see the header for its two layouts).
    fns[`${batch}get-many`] = (/** @type {number} */ h, /** @type {number} */ kp, /** @type {number} */ kl, /** @type {number} */ ret) => {
      const b = bucket(h);
      const keys = strings(kp, kl);
      return result(
        ret,
        4,
        () => b.store.getMany(keys),
        (values) => {
          const base = g.alloc(4, keys.length * 20);
          keys.forEach((k, i) => {
            const at = base + i * 20;
            const val = values[i];
            if (draft2) {
              const [p, l] = g.putString(k);
              g.putPtrLen(at, p, l);
              putOptionBytes(at + 8, val);
            } else if (val === undefined) g.view().setUint8(at, 0);
            else {
              const [p, l] = g.putString(k);
              const [vp2, vl2] = g.putBytes(val);
              g.view().setUint8(at, 1);
              g.putPtrLen(at + 4, p, l);
              g.putPtrLen(at + 12, vp2, vl2);
            }
          });
          g.putPtrLen(ret + 4, base, keys.length);
        },
      );
    };
    fns[`${batch}set-many`] = (/** @type {number} */ h, /** @type {number} */ ptr, /** @type {number} */ len, /** @type {number} */ ret) => {
      const b = bucket(h);
      const pairs = g.pairs(ptr, len);
      return result(
        ret,
        4,
        () => b.store.setMany(pairs),
        () => {},
      );
    };
    fns[`${batch}delete-many`] = (/** @type {number} */ h, /** @type {number} */ kp, /** @type {number} */ kl, /** @type {number} */ ret) => {
      const b = bucket(h);
      const keys = strings(kp, kl);
      return result(
        ret,
        4,
        () => b.store.deleteMany(keys),
        () => {},
      );
    };
  }
  return fns;
}

/** Stores a list<string> (pointer, length) at `at`. @param {Guest} g @param {number} at @param {readonly string[]} list */
function putStrings(g, at, list) {
  const base = g.alloc(4, list.length * 8);
  list.forEach((s, i) => {
    const [p, l] = g.putString(s);
    g.putPtrLen(base + i * 8, p, l);
  });
  g.putPtrLen(at, base, list.length);
}
