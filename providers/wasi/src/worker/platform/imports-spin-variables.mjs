// `fermyon:spin/variables@2.0.0` (Spin's own interface: spin-sdk's `variables::get`) as core-level
// imports for one instance served per request (see ../http/canon.mjs), and for jco's bindings
// (spinVariablesGet). It reads the same configuration as wasi:config/store
// (../../platform/config-store.mjs: a Spin component's resolved variables). Plain JavaScript.
//
//   get: func(name: string) -> result<string, error>
//   variant error { invalid-name(string), undefined(string), provider(string), other(string) }
import { SPIN_VARIABLES_VERSIONS } from '../../platform/interface-versions.mjs';
/** @import { Guest } from '../http/canon.mjs' */
/** @import { ConfigStore } from '../../platform/config-store.mjs' */

/** A variable name as Spin accepts it: lower-case letters, digits and single underscores, starting with a letter. */
const NAME = /^[a-z][a-z0-9]*(_[a-z0-9]+)*$/;

/** Error case indices of the WIT variant. */
const INVALID_NAME = 0;
const UNDEFINED = 1;

/**
 * The lookup both paths share: `{ ok: value }` or `{ err: [case, message] }`.
 * @param {ConfigStore} config @param {string} name
 * @returns {{ ok: string } | { err: [number, string] }}
 */
export function spinVariablesGet(config, name) {
  if (!NAME.test(name))
    return { err: [INVALID_NAME, `invalid variable name ${JSON.stringify(name)}: lower-case letters, digits and underscores, starting with a letter`] };
  const value = config.get(name);
  if (value === undefined) return { err: [UNDEFINED, `no variable for ${JSON.stringify(name)}`] };
  return { ok: value };
}

/**
 * @param {Guest} g
 * @param {() => ConfigStore} config
 * @returns {Record<string, (...args: any[]) => unknown>} by `fermyon:spin/variables@<version>#get`
 */
export function spinVariablesImports(g, config) {
  /** @type {Record<string, (...args: any[]) => unknown>} */
  const fns = {};
  for (const v of SPIN_VARIABLES_VERSIONS) {
    // result<string, error>: the result's tag at ret; ok: the string at ret+4; err: the variant's tag at ret+4, its string at ret+8.
    fns[`fermyon:spin/variables@${v}#get`] = (/** @type {number} */ ptr, /** @type {number} */ len, /** @type {number} */ ret) => {
      const r = spinVariablesGet(config(), g.string(ptr, len));
      if ('ok' in r) {
        const [p, l] = g.putString(r.ok);
        g.view().setUint8(ret, 0);
        g.putPtrLen(ret + 4, p, l);
        return;
      }
      const [p, l] = g.putString(r.err[1]);
      const dv = g.view();
      dv.setUint8(ret, 1);
      dv.setUint8(ret + 4, r.err[0]);
      g.putPtrLen(ret + 8, p, l);
    };
  }
  return fns;
}
