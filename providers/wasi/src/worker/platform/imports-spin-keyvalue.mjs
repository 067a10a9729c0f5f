// `fermyon:spin/key-value@2.0.0` (Spin's own interface: spin-sdk's `key_value::Store`) over the
// container's key-value stores (../../platform/keyvalue-store.mjs, the same stores as wasi:keyvalue):
// core-level imports for one instance served per request (see ../http/canon.mjs; a store answering
// with a promise, Redis, makes the call return one: these imports are JSPI `Suspending`), and the
// `Store` resource for jco's bindings (jcoSpinKeyValue). Plain JavaScript, typed with JSDoc.
//
//   resource store {
//     open: static func(label: string) -> result<store, error>;
//     get: func(key: string) -> result<option<list<u8>>, error>;
//     set: func(key: string, value: list<u8>) -> result<_, error>;
//     delete: func(key: string) -> result<_, error>;
//     exists: func(key: string) -> result<bool, error>;
//     get-keys: func() -> result<list<string>, error>;
//   }
//   variant error { store-table-full, no-such-store, access-denied, other(string) }
import { SPIN_KEYVALUE_VERSIONS } from '../../platform/interface-versions.mjs';
import { asKeyValueError, andThen } from '../../platform/keyvalue-store.mjs';
import { keyMethods, resultWriter } from './keyvalue-lowering.mjs';
/** @import { Guest } from '../http/canon.mjs' */
/** @import { KeyValueBackend, KeyValueStores, Maybe } from '../../platform/keyvalue-store.mjs' */

/** A `store` handle: one store of the container. */
export class SpinStore {
  /** @param {KeyValueBackend} store @param {string} label */
  constructor(store, label) {
    this.store = store;
    this.label = label;
  }
}

const ERROR_TAGS = { 'no-such-store': 1, 'access-denied': 2, other: 3 };

/**
 * Every key of `store`, page after page (`list-keys` pages of at most 1000).
 * @param {KeyValueBackend} store @returns {Maybe<string[]>}
 */
export function allKeys(store) {
  /** @type {string[]} */
  const keys = [];
  /** @param {string | undefined} cursor @returns {Maybe<string[]>} */
  const page = (cursor) =>
    /** @type {Maybe<string[]>} a later page's promise is awaited by the one before */ (
      andThen(
        () => store.listKeys(cursor),
        (p) => {
          keys.push(...p.keys);
          return p.cursor === undefined ? keys : page(p.cursor);
        },
      )
    );
  return page(undefined);
}

/**
 * @param {Guest} g
 * @param {() => KeyValueStores} stores the container's stores
 * @returns {Record<string, (...args: any[]) => unknown>} by `fermyon:spin/key-value@<version>#<function>`
 */
export function spinKeyValueImports(g, stores) {
  const T = g.table;
  const writer = resultWriter(g, ERROR_TAGS);
  /** @template V @param {number} ret @param {() => Maybe<V>} op @param {(v: V) => void} ok */
  const result = (ret, op, ok) => writer(ret, 4, op, ok);
  /** @param {number} h */
  const handle = (h) => T.get(h, SpinStore);

  /** @type {Record<string, (...args: any[]) => unknown>} */
  const fns = {};
  for (const v of SPIN_KEYVALUE_VERSIONS) {
    const kv = `fermyon:spin/key-value@${v}#`;
    fns[`${kv}[static]store.open`] = (/** @type {number} */ ptr, /** @type {number} */ len, /** @type {number} */ ret) => {
      const label = g.string(ptr, len);
      return result(
        ret,
        () => stores().open(label),
        (s) => g.view().setUint32(ret + 4, T.add(new SpinStore(s, label)), true),
      );
    };
    fns[`${kv}[resource-drop]store`] = (/** @type {number} */ h) => void T.take(h, SpinStore);
    const keys = keyMethods(g, handle, writer);
    fns[`${kv}[method]store.get`] = keys.get;
    fns[`${kv}[method]store.set`] = keys.set;
    fns[`${kv}[method]store.delete`] = keys.delete;
    fns[`${kv}[method]store.exists`] = keys.exists;
    fns[`${kv}[method]store.get-keys`] = (/** @type {number} */ h, /** @type {number} */ ret) => {
      const s = handle(h);
      return result(
        ret,
        () => allKeys(s.store),
        (keys) => {
          const base = g.alloc(4, keys.length * 8);
          keys.forEach((k, i) => {
            const [p, l] = g.putString(k);
            g.putPtrLen(base + i * 8, p, l);
          });
          g.putPtrLen(ret + 4, base, keys.length);
        },
      );
    };
  }
  return fns;
}

/**
 * The interface for jco's bindings (synchronous stores: see jco-platform.mjs): `Store` with its
 * static `open`, each method returning `{ tag: 'ok' | 'err', val }`.
 * @param {() => KeyValueStores} stores
 */
export function jcoSpinKeyValue(stores) {
  /** @param {() => Maybe<unknown>} op @returns {{ tag: 'ok', val?: unknown } | { tag: 'err', val: unknown }} */
  const run = (op) => {
    try {
      const v = op();
      if (v instanceof Promise) {
        v.catch(() => {});
        return { tag: 'err', val: { tag: 'other', val: "the store answered asynchronously, which this component's bindings cannot wait for" } };
      }
      return { tag: 'ok', val: v };
    } catch (e) {
      const k = asKeyValueError(e);
      return { tag: 'err', val: k.kind === 'other' ? { tag: 'other', val: k.message } : { tag: k.kind } };
    }
  };
  class Store {
    /** @param {KeyValueBackend} store */
    constructor(store) {
      this.store = store;
    }
    /** @param {string} label */
    static open(label) {
      const r = run(() => stores().open(label));
      return r.tag === 'ok' ? { tag: 'ok', val: new Store(/** @type {KeyValueBackend} */ (r.val)) } : r;
    }
    /** @param {string} key */
    get(key) {
      return run(() => this.store.get(key));
    }
    /** @param {string} key @param {Uint8Array} value */
    set(key, value) {
      return run(() => this.store.set(key, value));
    }
    /** @param {string} key */
    delete(key) {
      return run(() => this.store.delete(key));
    }
    /** @param {string} key */
    exists(key) {
      return run(() => this.store.exists(key));
    }
    getKeys() {
      return run(() => allKeys(this.store));
    }
  }
  return { Store };
}
