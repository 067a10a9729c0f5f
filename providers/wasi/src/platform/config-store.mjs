// The configuration a component reads through `wasi:config/store` (get, get-all): the container's
// environment variables named `SPIN_VARIABLE_<KEY>`, as Spin's environment provider and SpinKube's
// spin-operator pass application variables. A ConfigMap or Secret reaches it the Kubernetes way,
// through the container's env: `envFrom: [{ configMapRef: { name }, prefix: SPIN_VARIABLE_ }]`, or
// one `env` entry with `valueFrom.configMapKeyRef` / `secretKeyRef` — core resolves both before the
// container starts, so a changed ConfigMap is seen by the next container start, as for any env.
//
// Keys are what the component asks for: `get("api_key")` reads `SPIN_VARIABLE_API_KEY` (Spin's
// spelling, upper case), or `SPIN_VARIABLE_api_key` when that is how the variable is named (an
// envFrom prefix keeps the ConfigMap's own key). `get-all` lists every such variable with its key in
// lower case. Runs in the worker threads (plain JavaScript, typed with JSDoc) and is small on purpose:
// other hosts (fermyon:spin/variables) build on the same store.

/** The prefix of the environment variables that hold configuration values. */
export const CONFIG_ENV_PREFIX = 'SPIN_VARIABLE_';

/** A read-only set of configuration values, by key. */
export class ConfigStore {
  /** @type {Map<string, string>} values by key as stored (lower-cased on lookup) */
  #values = new Map();

  /** @param {Iterable<readonly [string, string]>} entries key → value; keys are matched without regard to case */
  constructor(entries) {
    for (const [k, v] of entries) this.#values.set(k.toLowerCase(), v);
  }

  /** The value of `key`, or undefined. @param {string} key @returns {string | undefined} */
  get(key) {
    return this.#values.get(key.toLowerCase());
  }

  /** Every key (lower case) and its value, sorted by key. @returns {Array<[string, string]>} */
  getAll() {
    return [...this.#values.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  }
}

/**
 * The configuration held in `env`: every `SPIN_VARIABLE_<KEY>` variable as `<key>`. When two
 * variables differ only in the case of their key, the upper-case spelling (Spin's) wins.
 * @param {Readonly<Record<string, string>> | Iterable<readonly [string, string]>} env
 * @returns {ConfigStore}
 */
export function configFromEnv(env) {
  const entries = Symbol.iterator in env ? [.../** @type {Iterable<readonly [string, string]>} */ (env)] : Object.entries(env);
  const picked = entries
    .filter(([k]) => k.startsWith(CONFIG_ENV_PREFIX) && k.length > CONFIG_ENV_PREFIX.length)
    .map(([k, v]) => /** @type {[string, string]} */ ([k.slice(CONFIG_ENV_PREFIX.length), v]))
    // lower-case spellings first, so an upper-case one (set later) wins
    .sort(([a], [b]) => Number(a === a.toUpperCase()) - Number(b === b.toUpperCase()));
  return new ConfigStore(picked);
}
