// A key-value store in a SQLite file on the node (Node's built-in `node:sqlite`), the default store
// of a pod: every label lives in one table keyed by (store, key), as Spin's default store keeps its
// data. The file is under the pod's directory, so the data outlives a restart of the container and
// goes with the pod. Each thread opens the file for itself (a DatabaseSync is not shared between
// threads); WAL mode lets the pod's containers read while one writes, and a busy timeout makes a
// writer wait for another rather than fail. Every operation is synchronous.
// Plain JavaScript, typed with JSDoc (it runs in the worker threads).
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { counterBytes, counterOf } from './keyvalue-counter.mjs';

/** Keys returned by one `list-keys` call at most. */
export const LIST_PAGE = 1000;

/** A store in a SQLite file (a KeyValueBackend: keyvalue-store.mjs). */
export class SqliteStore {
  /**
   * @param {string} path the database file (made, with its directory, when absent)
   * @param {string} store the label of this store in the file
   */
  constructor(path, store) {
    mkdirSync(dirname(path), { recursive: true, mode: 0o750 });
    // Loaded on first use: the threads that never open a SQLite store (nodelet's own) never load it.
    const { DatabaseSync } = /** @type {typeof import('node:sqlite')} */ (process.getBuiltinModule('node:sqlite'));
    this.db = new DatabaseSync(path, { timeout: 5000 });
    this.db.exec('PRAGMA journal_mode = WAL');
    this.db.exec('CREATE TABLE IF NOT EXISTS kv (store TEXT NOT NULL, key TEXT NOT NULL, value BLOB NOT NULL, PRIMARY KEY (store, key)) WITHOUT ROWID');
    this.store = store;
    this.q = {
      get: this.db.prepare('SELECT value FROM kv WHERE store = ? AND key = ?'),
      set: this.db.prepare('INSERT INTO kv (store, key, value) VALUES (?, ?, ?) ON CONFLICT (store, key) DO UPDATE SET value = excluded.value'),
      del: this.db.prepare('DELETE FROM kv WHERE store = ? AND key = ?'),
      list: this.db.prepare('SELECT key FROM kv WHERE store = ? ORDER BY key LIMIT ? OFFSET ?'),
    };
  }

  /** @param {string} key @returns {Uint8Array | undefined} */
  get(key) {
    const row = this.q.get.get(this.store, key);
    return row ? new Uint8Array(/** @type {Uint8Array} */ (row.value)) : undefined;
  }

  /** @param {string} key @param {Uint8Array} value */
  set(key, value) {
    this.q.set.run(this.store, key, value);
  }

  /** @param {string} key */
  delete(key) {
    this.q.del.run(this.store, key);
  }

  /** @param {string} key */
  exists(key) {
    return this.q.get.get(this.store, key) !== undefined;
  }

  /** @param {string | undefined} cursor the offset of the page, in decimal */
  listKeys(cursor) {
    const offset = cursor === undefined ? 0 : Number(cursor);
    if (!Number.isSafeInteger(offset) || offset < 0) throw new Error(`invalid cursor ${JSON.stringify(cursor)}`);
    const keys = this.q.list.all(this.store, LIST_PAGE, offset).map((r) => String(r.key));
    return { keys, cursor: keys.length === LIST_PAGE ? String(offset + LIST_PAGE) : undefined };
  }

  /** @param {string} key @param {bigint} delta */
  increment(key, delta) {
    return this.#transaction(() => {
      const next = BigInt.asIntN(64, counterOf(key, this.get(key)) + delta);
      this.set(key, counterBytes(next));
      return next;
    });
  }

  /** @param {readonly string[]} keys */
  getMany(keys) {
    return keys.map((k) => this.get(k));
  }

  /** @param {ReadonlyArray<readonly [string, Uint8Array]>} pairs */
  setMany(pairs) {
    this.#transaction(() => {
      for (const [k, v] of pairs) this.set(k, v);
    });
  }

  /** @param {readonly string[]} keys */
  deleteMany(keys) {
    this.#transaction(() => {
      for (const k of keys) this.delete(k);
    });
  }

  /** @param {string} key @param {Uint8Array | undefined} expected @param {Uint8Array} value */
  swap(key, expected, value) {
    return this.#transaction(() => {
      const now = this.get(key);
      const same = now === undefined || expected === undefined ? now === expected : Buffer.compare(now, expected) === 0;
      if (same) this.set(key, value);
      return same;
    });
  }

  close() {
    if (this.db.isOpen) this.db.close();
  }

  /**
   * Runs `f` in a write transaction (taken at its start, so two increments never interleave).
   * @template T @param {() => T} f @returns {T}
   */
  #transaction(f) {
    this.db.exec('BEGIN IMMEDIATE');
    try {
      const r = f();
      this.db.exec('COMMIT');
      return r;
    } catch (e) {
      this.db.exec('ROLLBACK');
      throw e;
    }
  }
}
