// Running a preview1 module whose imports may wait on asynchronous I/O, with
// WebAssembly JSPI (on by default in Node 24): the imports that may wait are
// `WebAssembly.Suspending`, `_start` is called through `WebAssembly.promising`,
// and the module's stack is suspended while the worker's event loop runs.
// Plain JavaScript: workers start without a TypeScript loader (see README.md).
//
// Used only for modules that need it (pre-opened sockets, wasi_experimental_http);
// every other module runs synchronously as before.
import { StoppedError } from './wasi-imports.mjs';

/** proc_exit of a module run with {@link startPromising}: unwinds the suspended stack with the code. */
export class ProcExit extends Error {
  constructor(code) {
    super(`proc_exit(${code})`);
    this.name = 'ProcExit';
    this.code = code;
  }
}

/**
 * A promise that rejects with StoppedError once `control[0]` is set (stop()
 * stores 1 there and notifies), so a suspended module unwinds at once.
 * `cancel()` ends the wait (call it when the module is done).
 * @param {Int32Array} control
 */
export function stopSignal(control) {
  let cancel = () => {};
  const promise = new Promise((_, reject) => {
    let done = false;
    const check = () => {
      if (done) return;
      if (Atomics.load(control, 0) !== 0) return reject(new StoppedError());
      const r = Atomics.waitAsync(control, 0, 0);
      if (!r.async) return check();
      r.value.then(check);
    };
    cancel = () => {
      done = true;
      Atomics.notify(control, 0); // ends the pending waitAsync (it would keep the thread alive)
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
 * @param {Record<string, Function>} w
 * @param {Iterable<string>} names
 */
export function makeSuspending(w, names) {
  for (const name of names) {
    if (typeof w[name] === 'function') w[name] = new WebAssembly.Suspending(w[name]);
  }
}

/** A proc_exit that throws {@link ProcExit} (install before stopOnRequest). */
export function procExitUnwinds(w) {
  w.proc_exit = (code) => {
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
