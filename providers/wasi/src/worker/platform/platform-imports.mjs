// The platform interfaces nodelet's own host gives a component served per request, beside WASI 0.2's
// (../http/host-imports.mjs): wasi:config/store, wasi:keyvalue/{store,atomics,batch} and
// wasi:logging/logging, keyed `interface@version#function` — their draft versions differ in ABI
// (wasi:keyvalue) or may, so each version is named. The container's configuration and stores are
// made once per container (shared by its instances); each instance has its own handles.
// Plain JavaScript, typed with JSDoc.
import { ConfigStore, configFromEnv } from '../../platform/config-store.mjs';
import { KeyValueStores } from '../../platform/keyvalue-store.mjs';
import { configImports } from './imports-config.mjs';
import { keyvalueImports } from './imports-keyvalue.mjs';
import { loggingImports } from './imports-logging.mjs';
import { spinVariablesImports } from './imports-spin-variables.mjs';
import { spinKeyValueImports } from './imports-spin-keyvalue.mjs';
/** @import { Guest } from '../http/canon.mjs' */
/** @import { PlatformConfig } from '../../platform/platform-config.ts' */

/** What the platform interfaces of one container read and write. */
export class Platform {
  /** @type {ConfigStore | undefined} */
  #config;
  /** @type {KeyValueStores | undefined} */
  #stores;

  /**
   * @param {PlatformConfig} config the container's stores (platform-config.ts)
   * @param {Readonly<Record<string, string>> | ReadonlyArray<readonly [string, string]>} env the container's environment
   * @param {{ blocking?: boolean }} [opts] blocking: the stores answer synchronously (for jco's bindings)
   */
  constructor(config, env, opts = {}) {
    this.settings = config;
    this.env = env;
    this.opts = opts;
  }

  /** The configuration (made on first use). */
  get config() {
    const vars = this.settings.variables;
    return (this.#config ??= vars ? new ConfigStore(Object.entries(vars)) : configFromEnv(this.env));
  }

  /** The key-value stores (each opened on first use). */
  get keyvalue() {
    return (this.#stores ??= new KeyValueStores(this.settings.keyvalue, { ...this.opts, allowed: this.settings.keyvalueAllowed }));
  }

  close() {
    this.#stores?.close();
  }
}

/** With no platform given (tests, the plan's probe): every store is unknown. */
const NONE = new Platform({ keyvalue: {} }, {});

/**
 * The platform functions for one instance.
 * @param {Guest} g
 * @param {Platform | undefined} platform
 * @param {{ stdout: (b: Uint8Array) => void, stderr: (b: Uint8Array) => void }} out
 */
export function platformFunctions(g, platform, out) {
  const p = platform ?? NONE;
  return {
    ...configImports(g, () => p.config),
    ...spinVariablesImports(g, () => p.config),
    ...spinKeyValueImports(g, () => p.keyvalue),
    ...keyvalueImports(g, () => p.keyvalue),
    ...loggingImports(g, out),
  };
}

/** The platform functions that may wait (a Redis store): every wasi:keyvalue and fermyon:spin/key-value one. @param {string} key */
export const platformSuspends = (key) => key.startsWith('wasi:keyvalue/') || key.startsWith('fermyon:spin/key-value@');
