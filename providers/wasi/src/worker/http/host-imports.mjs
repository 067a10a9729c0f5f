// Every WASI 0.2 function nodelet's own host gives a component served per request, keyed
// `interface#function` without the version (0.2.0 … 0.2.x share one ABI for these): the
// `wasi:http/proxy` world (wasi:http, wasi:io, wasi:clocks, wasi:random, wasi:cli's stdio) plus
// what language runtimes import beside it (wasi:cli environment, exit, terminals); and the
// platform interfaces (wasi:config, wasi:keyvalue, wasi:logging: ../platform/platform-imports.mjs),
// keyed `interface@version#function`, their drafts' ABIs differing by version.
// Plain JavaScript, typed with JSDoc.
import { httpImports } from './imports-http.mjs';
import { ioImports, systemImports } from './imports-io.mjs';
import { platformFunctions, platformSuspends } from '../platform/platform-imports.mjs';
/** @import { Guest } from './canon.mjs' */
/** @import { CliContext, CoreFunction } from './imports-io.mjs' */

/**
 * The functions that may wait: JSPI `Suspending` imports, so the instance's stack is suspended
 * (and every other request runs on) while they do.
 */
export const SUSPENDING = new Set([
  'wasi:io/poll#poll',
  'wasi:io/poll#[method]pollable.block',
  'wasi:io/streams#[method]input-stream.blocking-read',
  'wasi:io/streams#[method]input-stream.blocking-skip',
  'wasi:io/streams#[method]output-stream.blocking-write-and-flush',
  'wasi:io/streams#[method]output-stream.blocking-flush',
  'wasi:io/streams#[method]output-stream.blocking-write-zeroes-and-flush',
  'wasi:io/streams#[method]output-stream.blocking-splice',
]);

/** A WASI 0.2 interface (any 0.2.x): keyed without its version. */
const WASI_02 = /^(wasi:[a-z-]+\/[a-z-]+)@0\.2\.\d+$/;

/**
 * The key of an import of the core module (`module` is the versioned interface).
 * @param {string} module @param {string} name
 */
export function importKey(module, name) {
  const core = WASI_02.exec(module);
  return core ? `${core[1]}#${name}` : `${module}#${name}`;
}

/** Whether the function keyed `key` may wait (a JSPI `Suspending` import). @param {string} key */
export const suspends = (key) => SUSPENDING.has(key) || platformSuspends(key);

/**
 * The host functions for one instance.
 * @param {Guest} g
 * @param {CliContext} cli
 * @returns {Record<string, CoreFunction>}
 */
export function hostFunctions(g, cli) {
  return { ...ioImports(g), ...systemImports(g, cli), ...httpImports(g, cli.route, cli.outbound), ...platformFunctions(g, cli.platform, cli) };
}
