/**
 * WebAssembly JSPI (JavaScript Promise Integration), on by default in Node 24
 * (V8 13.x) but not yet in TypeScript's lib: what jspi.mjs and
 * suspending-poll.mjs use of it, as the JSPI proposal defines it.
 */
declare namespace WebAssembly {
  /** Wraps an import that returns a promise: the calling Wasm stack suspends until it settles. */
  class Suspending {
    constructor(fn: (...args: never[]) => unknown);
  }
  /** Wraps an export so that calling it returns a promise (resolved when the Wasm call returns, across suspensions). */
  function promising(fn: ExportValue): (...args: unknown[]) => Promise<unknown>;
}
