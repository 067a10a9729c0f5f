// How a key-value operation fails (`wasi:keyvalue/store.error`), and how a backend's answer, now or
// later, is carried on with its failures as that error. Plain JavaScript, typed with JSDoc.
/** @import { Maybe } from './keyvalue-store.mjs' */

/** A failure of a key-value operation, as `wasi:keyvalue/store.error` names it. */
export class KeyValueError extends Error {
  /**
   * @param {'no-such-store' | 'access-denied' | 'other'} kind
   * @param {string} message
   */
  constructor(kind, message) {
    super(message);
    this.name = 'KeyValueError';
    this.kind = kind;
  }
}

/**
 * Runs `f` on the value of `op()`, now or when it resolves (not named `then`: a module exporting
 * `then` is a thenable to `await import()`); a backend's failure becomes an `other`
 * KeyValueError (a KeyValueError passes as it is).
 * @template T, U
 * @param {() => Maybe<T>} op
 * @param {(v: T) => U} f
 * @returns {Maybe<U>}
 */
export function andThen(op, f) {
  let v;
  try {
    v = op();
  } catch (e) {
    throw asKeyValueError(e);
  }
  if (v instanceof Promise)
    return v.then(f, (e) => {
      throw asKeyValueError(e);
    });
  return f(v);
}

/** @param {unknown} e @returns {KeyValueError} */
export function asKeyValueError(e) {
  if (e instanceof KeyValueError) return e;
  return new KeyValueError('other', e instanceof Error ? e.message : String(e));
}
