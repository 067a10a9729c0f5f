// The platform interfaces (wasi:config/store, wasi:keyvalue/{store,atomics,batch},
// wasi:logging/logging, fermyon:spin/variables and fermyon:spin/key-value) as jco's instantiate() takes them, for the components run through jco's
// bindings with one instance (../component-worker.mjs: the cli world, and http components that
// cannot be served per request). jco lifts and lowers the values; a function returns
// `{ tag: 'ok' | 'err', val }` for a WIT result.
//
// These calls cannot wait: jco's bindings here are synchronous. A SQLite store answers at once; a
// store on Redis is a BlockingRedisStore here (../../platform/blocking-store.mjs: the thread sleeps
// until Redis answers, the client running in a helper thread), where the per-request host
// (../http/) suspends only the waiting instance instead.
// Plain JavaScript, typed with JSDoc.
import { asKeyValueError } from '../../platform/keyvalue-store.mjs';
import { LOG_LEVELS, logLine } from '../../platform/log-line.mjs';
import { spinVariablesGet } from './imports-spin-variables.mjs';
import { jcoSpinKeyValue } from './imports-spin-keyvalue.mjs';
/** @import { Platform } from './platform-imports.mjs' */
/** @import { KeyValueBackend, Maybe } from '../../platform/keyvalue-store.mjs' */
/** @import { LogLevel } from '../../platform/log-line.mjs' */

/** @typedef {{ tag: 'ok', val?: unknown } | { tag: 'err', val: unknown }} WitResult */

/**
 * @param {Platform} platform the container's configuration and stores
 * @param {readonly string[]} imports the component's imports with their versions (component-cache.ts)
 * @param {(stream: 'stdout' | 'stderr', b: Uint8Array) => void} write the container's log
 * @returns {Record<string, Record<string, unknown>>} by interface, as jco names them (unversioned)
 */
export function jcoPlatformImports(platform, imports, write) {
  // The drafts of wasi:keyvalue differ (imports-keyvalue.mjs); one component imports one of them.
  const draft2 = imports.some((i) => i.startsWith('wasi:keyvalue/') && i.endsWith('@0.2.0-draft2'));

  /** @param {string} label @param {() => Maybe<unknown>} op @param {(v: any) => unknown} [map] @returns {WitResult} */
  const run = (label, op, map = (v) => v) => {
    try {
      const v = op();
      if (v instanceof Promise) {
        // Not with the stores Platform makes for this path (blocking); kept as an error value, not a trap.
        v.catch(() => {});
        return err(`store ${label} answered asynchronously, which this component's bindings cannot wait for`);
      }
      return { tag: 'ok', val: map(v) };
    } catch (e) {
      const k = asKeyValueError(e);
      return { tag: 'err', val: k.kind === 'other' ? { tag: 'other', val: k.message } : { tag: k.kind } };
    }
  };
  /** @param {string} message @returns {WitResult} */
  const err = (message) => ({ tag: 'err', val: { tag: 'other', val: message } });

  class Bucket {
    /** @param {KeyValueBackend} store @param {string} label */
    constructor(store, label) {
      this.store = store;
      this.label = label;
    }
    /** @param {string} key */
    get(key) {
      return run(this.label, () => this.store.get(key));
    }
    /** @param {string} key @param {Uint8Array} value */
    set(key, value) {
      return run(this.label, () => this.store.set(key, value));
    }
    /** @param {string} key */
    delete(key) {
      return run(this.label, () => this.store.delete(key));
    }
    /** @param {string} key */
    exists(key) {
      return run(this.label, () => this.store.exists(key));
    }
    /** @param {string | bigint | undefined} cursor */
    listKeys(cursor) {
      return run(
        this.label,
        () => this.store.listKeys(cursor === undefined ? undefined : String(cursor)),
        (/** @type {{ keys: string[], cursor: string | undefined }} */ p) => ({
          keys: p.keys,
          cursor: p.cursor === undefined ? undefined : draft2 ? p.cursor : BigInt(p.cursor),
        }),
      );
    }
  }

  class Cas {
    /** @param {Bucket} bucket @param {string} key @param {Uint8Array | undefined} current */
    constructor(bucket, key, current) {
      this.bucket = bucket;
      this.key = key;
      this.value = current;
    }
    /** @param {Bucket} bucket @param {string} key */
    static new(bucket, key) {
      return run(
        bucket.label,
        () => bucket.store.get(key),
        (cur) => new Cas(bucket, key, cur),
      );
    }
    current() {
      return { tag: 'ok', val: this.value };
    }
  }

  return {
    'wasi:config/store': {
      get: (/** @type {string} */ key) => ({ tag: 'ok', val: platform.config.get(key) }),
      getAll: () => ({ tag: 'ok', val: platform.config.getAll() }),
    },
    'fermyon:spin/variables': {
      get: (/** @type {string} */ name) => {
        const r = spinVariablesGet(platform.config, name);
        const cases = ['invalid-name', 'undefined', 'provider', 'other'];
        return 'ok' in r ? { tag: 'ok', val: r.ok } : { tag: 'err', val: { tag: cases[r.err[0]], val: r.err[1] } };
      },
    },
    'fermyon:spin/key-value': jcoSpinKeyValue(() => platform.keyvalue),
    'wasi:logging/logging': {
      log: (/** @type {LogLevel} */ level, /** @type {string} */ context, /** @type {string} */ message) => {
        const { stream, line } = logLine(LOG_LEVELS.includes(level) ? level : 'info', context, message);
        write(stream, Buffer.from(line));
      },
    },
    'wasi:keyvalue/store': {
      Bucket,
      open: (/** @type {string} */ label) =>
        run(
          label,
          () => platform.keyvalue.open(label),
          (s) => new Bucket(s, label),
        ),
    },
    'wasi:keyvalue/atomics': {
      Cas,
      increment: (/** @type {Bucket} */ b, /** @type {string} */ key, /** @type {bigint} */ delta) =>
        run(
          b.label,
          () => b.store.increment(key, draft2 ? BigInt.asIntN(64, delta) : BigInt.asUintN(64, delta)),
          (/** @type {bigint} */ n) => (draft2 ? n : BigInt.asUintN(64, n)),
        ),
      swap: (/** @type {Cas} */ c, /** @type {Uint8Array} */ value) => {
        const r = run(c.bucket.label, () => c.bucket.store.swap(c.key, c.value, value));
        if (r.tag === 'err') return { tag: 'err', val: { tag: 'store-error', val: r.val } };
        if (r.val) return { tag: 'ok' };
        const fresh = Cas.new(c.bucket, c.key);
        return fresh.tag === 'ok' ? { tag: 'err', val: { tag: 'cas-failed', val: fresh.val } } : { tag: 'err', val: { tag: 'store-error', val: fresh.val } };
      },
    },
    'wasi:keyvalue/batch': {
      getMany: (/** @type {Bucket} */ b, /** @type {string[]} */ keys) =>
        run(
          b.label,
          () => b.store.getMany(keys),
          (/** @type {Array<Uint8Array | undefined>} */ values) =>
            keys.map((k, i) => (draft2 ? [k, values[i]] : values[i] === undefined ? undefined : [k, values[i]])),
        ),
      setMany: (/** @type {Bucket} */ b, /** @type {Array<[string, Uint8Array]>} */ pairs) => run(b.label, () => b.store.setMany(pairs)),
      deleteMany: (/** @type {Bucket} */ b, /** @type {string[]} */ keys) => run(b.label, () => b.store.deleteMany(keys)),
    },
  };
}
