// `wasi:config/store` as core-level imports for one instance served per request (see
// ../http/canon.mjs): get and get-all over the container's configuration (../../platform/config-store.mjs).
// The versions components name: 0.2.0-draft (WebAssembly/wasi-config's tag, wasmCloud) and
// 0.2.0-draft-2024-09-27 (Spin 3); both have this one ABI. Plain JavaScript, typed with JSDoc.
import { CONFIG_VERSIONS } from '../../platform/interface-versions.mjs';
/** @import { Guest } from '../http/canon.mjs' */
/** @import { ConfigStore } from '../../platform/config-store.mjs' */

/**
 * @param {Guest} g
 * @param {() => ConfigStore} config the container's configuration
 * @returns {Record<string, (...args: any[]) => unknown>} by `wasi:config/store@<version>#<function>`
 */
export function configImports(g, config) {
  /** @type {Record<string, (...args: any[]) => unknown>} */
  const fns = {};
  for (const v of CONFIG_VERSIONS) {
    // result<option<string>, error>: the result's tag at ret, the option's at ret+4, the string at ret+8.
    fns[`wasi:config/store@${v}#get`] = (/** @type {number} */ ptr, /** @type {number} */ len, /** @type {number} */ ret) => {
      const value = config().get(g.string(ptr, len));
      g.view().setUint8(ret, 0);
      g.putOptionString(ret + 4, value);
    };
    // result<list<tuple<string, string>>, error>: the list at ret+4.
    fns[`wasi:config/store@${v}#get-all`] = (/** @type {number} */ ret) => {
      g.view().setUint8(ret, 0);
      g.putPairs(ret + 4, config().getAll());
    };
  }
  return fns;
}
