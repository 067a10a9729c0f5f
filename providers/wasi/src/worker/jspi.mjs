// Running a preview1 module whose imports may wait on asynchronous I/O, with
// WebAssembly JSPI (on by default in Node 24): the imports that may wait are
// `WebAssembly.Suspending`, `_start` is called through `WebAssembly.promising`,
// and the module's stack is suspended while the worker's event loop runs.
// Plain JavaScript: workers start without a TypeScript loader (see README.md);
// typed with JSDoc (JSPI's globals: jspi-globals.d.ts).
//
// Used only for modules that need it (pre-opened sockets, wasi_experimental_http);
// every other module runs synchronously as before.
import { StoppedError } from './wasi-imports.mjs';
import { WAKE } from './memory-limit.mjs';
/** @import { Preview1 } from './preview1.ts' */

/** proc_exit of a module run with {@link startPromising}: unwinds the suspended stack with the code. */
export class ProcExit extends Error {
  /** @param {number} code the exit code the module gave */
  constructor(code) {
    super(`proc_exit(${code})`);
    this.name = 'ProcExit';
    this.code = code;
  }
}

/**
 * A promise that rejects with StoppedError once `control[0]` is set (stop()
 * stores 1 there and notifies), so a suspended module unwinds at once.
 * `cancel()` ends the wait (call it when the module is done). With the control buffer's wake
 * word (memory-limit.mjs) it waits on that word, which the stop and every memory-limit request
 * change, and calls `onWake` — from the event loop, so while the module is suspended or between
 * its slices, never while it runs.
 * @param {Int32Array} control
 * @param {() => void} [onWake]
 */
export function stopSignal(control, onWake) {
  let cancel = () => {};
  /** @type {Promise<never>} */
  const promise = new Promise((_, reject) => {
    let done = false;
    // With the wake word (memory-limit.mjs), wait on it: the stop and every request change it.
    const word = control.length > WAKE ? WAKE : 0;
    const check = () => {
      if (done) return;
      const seen = word === WAKE ? Atomics.load(control, WAKE) : 0;
      if (Atomics.load(control, 0) !== 0) return reject(new StoppedError());
      onWake?.();
      const r = Atomics.waitAsync(control, word, seen);
      if (!r.async) return check();
      r.value.then(check);
    };
    cancel = () => {
      done = true;
      Atomics.notify(control, word); // ends the pending waitAsync (it would keep the thread alive)
    };
    check();
  });
  promise.catch(() => {});
  return { promise, cancel };
}

/**
 * Makes `names` of the import object `w` suspending, and proc_exit unwind with
 * {@link ProcExit} (node:wasi's proc_exit cannot cross a suspended stack).
 * Call last, after every other wrapper.
 * @param {Record<string, Function>} w an import namespace (wasi_snapshot_preview1, wasi_experimental_http)
 * @param {Iterable<string>} names
 */
export function makeSuspending(w, names) {
  for (const name of names) {
    const f = w[name];
    // A Suspending is not a function to JavaScript, but Wasm imports it as one.
    if (typeof f === 'function')
      w[name] = /** @type {Function} */ (/** @type {unknown} */ (new WebAssembly.Suspending(/** @type {(...args: never[]) => unknown} */ (f))));
  }
}

/**
 * A proc_exit that throws {@link ProcExit} (install before stopOnRequest).
 * @param {Preview1} w
 */
export function procExitUnwinds(w) {
  w.proc_exit = /** @param {number} code */ (code) => {
    throw new ProcExit(code);
  };
}

/**
 * Runs `_start` through WebAssembly.promising (node:wasi's `start` still binds
 * the memory). Resolves with the exit code; rejects with what the module threw.
 * @param {import('node:wasi').WASI} wasi
 * @param {WebAssembly.Instance} instance
 * @param {WebAssembly.Memory} memory
 * @returns {Promise<number>}
 */
export async function startPromising(wasi, instance, memory) {
  const start = WebAssembly.promising(instance.exports._start);
  /** @type {Promise<unknown> | undefined} */
  let running;
  wasi.start({ exports: { ...instance.exports, memory, _start: () => (running = start()) } });
  try {
    await running;
    return 0;
  } catch (e) {
    if (e instanceof ProcExit) return e.code;
    throw e;
  }
}
