// What a component's `wasi:keyvalue` buckets are backed by: a store per label (the identifier
// given to `store.open`), each either SQLite on the node (sqlite-store.mjs, the default store
// `default`) or a Redis server (redis-store.mjs) shared by the app's pods on every node.
//
// A backend answers at once (SQLite, synchronous) or with a promise (Redis): each operation returns
// `T | Promise<T>`, so the host that calls it suspends the component only when it must wait
// (worker/platform/). Values are bytes; a counter kept by `increment` is its decimal text (as
// Redis' INCRBY keeps it), so `get` of a counter reads e.g. `42` on either backend. List cursors are
// decimal numbers (an offset in SQLite, Redis' SCAN cursor), which also fit the u64 cursor of the
// 0.2.0-draft interface. Plain JavaScript, typed with JSDoc (it runs in the worker threads).
import { SqliteStore } from './sqlite-store.mjs';
import { RedisStore } from './redis-store.mjs';
import { BlockingRedisStore } from './blocking-store.mjs';
import { KeyValueError, asKeyValueError, andThen } from './keyvalue-error.mjs';

export { KeyValueError, asKeyValueError, andThen };

/**
 * A value or the promise of it.
 * @template T
 * @typedef {T | Promise<T>} Maybe
 */

/**
 * One key-value store.
 * @typedef {object} KeyValueBackend
 * @property {(key: string) => Maybe<Uint8Array | undefined>} get
 * @property {(key: string, value: Uint8Array) => Maybe<void>} set
 * @property {(key: string) => Maybe<void>} delete
 * @property {(key: string) => Maybe<boolean>} exists
 * @property {(cursor: string | undefined) => Maybe<{ keys: string[], cursor: string | undefined }>} listKeys
 *   a page of keys, and the cursor of the next page (undefined after the last)
 * @property {(key: string, delta: bigint) => Maybe<bigint>} increment adds `delta` (a signed 64-bit
 *   integer) to the key's counter (0 when absent), returns the new value
 * @property {(keys: readonly string[]) => Maybe<Array<Uint8Array | undefined>>} getMany values in the order of `keys`
 * @property {(pairs: ReadonlyArray<readonly [string, Uint8Array]>) => Maybe<void>} setMany
 * @property {(keys: readonly string[]) => Maybe<void>} deleteMany
 * @property {(key: string, expected: Uint8Array | undefined, value: Uint8Array) => Maybe<boolean>} swap
 *   sets `value` if the key still holds `expected` (undefined: is still absent); false when it did not
 * @property {() => void} close
 */

/**
 * Where a store's data is.
 * @typedef {{ type: 'sqlite', path: string } | { type: 'redis', url: string }} StoreConfig
 */

/** The label of the store every app has. */
export const DEFAULT_STORE = 'default';

/** The stores of one container, by label, each opened (its file or connection) on first use. */
export class KeyValueStores {
  /** @type {Map<string, KeyValueBackend>} */
  #open = new Map();

  /**
   * @param {Readonly<Record<string, StoreConfig>>} config
   * @param {{ blocking?: boolean, allowed?: readonly string[] }} [opts] blocking: every operation answers
   *   synchronously (a Redis store then blocks the calling thread until Redis answers: blocking-store.mjs);
   *   allowed: the only labels that may be opened, the others are `access-denied` (a Spin component's
   *   `key_value_stores`)
   */
  constructor(config, opts = {}) {
    this.config = config;
    this.blocking = opts.blocking ?? false;
    this.allowed = opts.allowed;
  }

  /**
   * The store labelled `label`; throws `no-such-store` for a label the pod does not configure.
   * @param {string} label
   * @returns {KeyValueBackend}
   */
  open(label) {
    if (this.allowed && !this.allowed.includes(label))
      throw new KeyValueError('access-denied', `store ${JSON.stringify(label)} is not in the component's key_value_stores`);
    const known = this.#open.get(label);
    if (known) return known;
    const c = Object.hasOwn(this.config, label) ? this.config[label] : undefined;
    if (!c) throw new KeyValueError('no-such-store', `no key-value store is labelled ${JSON.stringify(label)}`);
    /** @type {KeyValueBackend} */
    let store;
    try {
      store = c.type === 'sqlite' ? new SqliteStore(c.path, label) : this.blocking ? new BlockingRedisStore(c.url) : new RedisStore(c.url);
    } catch (e) {
      throw new KeyValueError('other', `store ${label}: ${e instanceof Error ? e.message : String(e)}`);
    }
    this.#open.set(label, store);
    return store;
  }

  /** Closes every store opened. */
  close() {
    for (const s of this.#open.values()) s.close();
    this.#open.clear();
  }
}
