// The versions of the platform interfaces nodelet provides (worker/platform/ implements them;
// component-cache.ts refuses a component naming another). A module of its own so the check loads
// none of the backends. Plain JavaScript.

/** wasi:config/store: WebAssembly/wasi-config's tag (wasmCloud) and Spin 3's name for the same WIT. */
export const CONFIG_VERSIONS = ['0.2.0-draft', '0.2.0-draft-2024-09-27'];
/** wasi:keyvalue/{store,atomics,batch}: WebAssembly/wasi-keyvalue's tag (wasmCloud) and Spin 3's draft2 (two ABIs). */
export const KEYVALUE_VERSIONS = ['0.2.0-draft', '0.2.0-draft2'];
/** fermyon:spin/variables (Spin's own interface; spin-sdk's `variables::get`). */
export const SPIN_VARIABLES_VERSIONS = ['2.0.0'];
/** fermyon:spin/key-value (Spin's own interface; spin-sdk's `key_value::Store`). */
export const SPIN_KEYVALUE_VERSIONS = ['2.0.0'];
/** wasi:logging/logging. */
export const LOGGING_VERSIONS = ['0.1.0-draft'];
