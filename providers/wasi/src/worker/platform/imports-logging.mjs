// `wasi:logging/logging@0.1.0-draft` (WebAssembly/wasi-logging; what Spin 3, wasmCloud and
// wit-bindgen users import) as a core-level import for one instance served per request: each call
// is one line of the container's log with its level (../../platform/log-line.mjs).
// Plain JavaScript, typed with JSDoc.
import { LOGGING_VERSIONS } from '../../platform/interface-versions.mjs';
import { HostTrap } from '../http/canon.mjs';
import { LOG_LEVELS, logLine } from '../../platform/log-line.mjs';
/** @import { Guest } from '../http/canon.mjs' */

/**
 * @param {Guest} g
 * @param {{ stdout: (b: Uint8Array) => void, stderr: (b: Uint8Array) => void }} out the container's log
 * @returns {Record<string, (...args: any[]) => unknown>}
 */
export function loggingImports(g, out) {
  /** @type {Record<string, (...args: any[]) => unknown>} */
  const fns = {};
  for (const v of LOGGING_VERSIONS) {
    fns[`wasi:logging/logging@${v}#log`] = (
      /** @type {number} */ level,
      /** @type {number} */ cptr,
      /** @type {number} */ clen,
      /** @type {number} */ mptr,
      /** @type {number} */ mlen,
    ) => {
      const name = LOG_LEVELS[level];
      if (name === undefined) throw new HostTrap(`invalid wasi:logging level ${level}`);
      const { stream, line } = logLine(name, g.string(cptr, clen), g.string(mptr, mlen));
      out[stream](Buffer.from(line));
    };
  }
  return fns;
}
