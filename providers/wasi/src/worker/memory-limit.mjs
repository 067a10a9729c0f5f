// A running module's memory limit, changed in place (`resizeContainer`): the worker's side.
// Plain JavaScript (loaded in worker threads without a TypeScript loader), imported by the
// main thread too (module-run.ts, grow-limit.ts) for the layout below.
//
// The module was rewritten (../grow-limit.ts) so that its memory.grow asks the exported
// global MEMORY_LIMIT_EXPORT (pages). The main thread cannot touch that global (it lives in
// the worker's isolate), and the worker's event loop is blocked while a module runs on a
// thread of its own, so the request goes through the run's control buffer:
//
//   main: Float64 [RESIZE_LIMIT] = bytes; Int32 [RESIZE_SEQ] += 1; Int32 [WAKE] += 1, notify it
//   worker, where the module is not running (at each WASI call, on waking from a sleep, and —
//   with JSPI — when the stop signal's wait returns): a new sequence number?
//     raise, or lower while the memory is below the new limit → set the global: 'applied'
//     lower to or below what the memory holds now                → nothing changes: 'below-usage'
//     the module was not rewritten (no global)                  → 'unsupported'
//   worker → main: { type: 'resized', seq, outcome, memoryBytes }
//
// A lowered limit never shrinks the memory (Wasm memories cannot shrink): it bounds growth.
/** @import { ModuleMessage } from '../worker-protocol.ts' */

/** The export the rewritten module keeps its memory limit in (pages). */
export const MEMORY_LIMIT_EXPORT = 'nodelet:memory-limit';
/** The limit global's value without a limit: all a 32-bit memory can have. */
export const NO_LIMIT_PAGES = 65536;
/** Int32 index in the control buffer: the latest request's sequence number (the main thread raises it). */
export const RESIZE_SEQ = 8;
/**
 * Int32 index in the control buffer: a counter the main thread raises (and notifies) for every
 * request and for the stop, which a sleeping module waits on. Waiting on a word every request
 * changes loses no wake-up: a request made between reading it and waiting ends the wait at once.
 */
export const WAKE = 9;
/** Float64 index in the control buffer (byte 48): the requested memory limit in bytes (Infinity: none). */
export const RESIZE_LIMIT = 6;
/** The control buffer's size with the resize slots (stop flag, memory size, CPU clock, request). */
export const RESIZE_CONTROL_BYTES = 56;

const PAGE = 65536;

/**
 * Wakes whatever waits on the control buffer's {@link WAKE} word (main thread: after a request or the stop).
 * @param {Int32Array} control
 */
export function wake(control) {
  if (control.length <= WAKE) return;
  Atomics.add(control, WAKE, 1);
  Atomics.notify(control, WAKE);
}

/**
 * A function that applies the latest memory-limit request, if it is new, and posts the
 * outcome. Call it only where the module is not running. No-op for a control buffer without
 * the resize slots.
 * @param {SharedArrayBuffer} control
 * @param {() => WebAssembly.Memory | undefined} mem
 * @param {() => WebAssembly.Exports | undefined} exports the instance's exports, once it exists
 * @param {number | undefined} startLimit the limit the module started with, in bytes
 * @param {(m: ModuleMessage) => void} post
 * @returns {() => void}
 */
export function memoryLimiter(control, mem, exports, startLimit, post) {
  if (control.byteLength < RESIZE_CONTROL_BYTES) return () => {};
  const i32 = new Int32Array(control);
  const f64 = new Float64Array(control);
  let seen = 0;
  let limit = startLimit ?? Infinity;
  return () => {
    const seq = Atomics.load(i32, RESIZE_SEQ);
    if (seq === seen) return;
    seen = seq;
    const want = f64[RESIZE_LIMIT];
    const memoryBytes = mem()?.buffer.byteLength ?? 0;
    const global = exports()?.[MEMORY_LIMIT_EXPORT];
    if (!(global instanceof WebAssembly.Global)) return post({ type: 'resized', seq, outcome: 'unsupported', memoryBytes });
    if (want < limit && memoryBytes >= want) return post({ type: 'resized', seq, outcome: 'below-usage', memoryBytes });
    global.value = Number.isFinite(want) ? Math.min(NO_LIMIT_PAGES, Math.floor(want / PAGE)) : NO_LIMIT_PAGES;
    limit = want;
    post({ type: 'resized', seq, outcome: 'applied', memoryBytes });
  };
}
