// The function a module's preemption points call (../preemption.ts): the module
// exports a one-slot table, `nodelet:preempt`, and calls slot 0 every
// PREEMPT_FUEL loop iterations and calls. Plain JavaScript: workers start
// without a TypeScript loader (see README.md); typed with JSDoc.
//
// The function reaches the module through a tiny helper module that imports it
// and exports it again (a table holds Wasm functions only); imported as a
// `WebAssembly.Suspending`, a call that returns a Promise suspends the module's
// stack (JSPI), one that returns nothing goes on at once.
import { SLICE_MS } from './suspending-poll.mjs';
import { StoppedError } from './wasi-imports.mjs';

/** The export holding the table (preemption.ts PREEMPT_TABLE_EXPORT). */
export const PREEMPT_TABLE_EXPORT = 'nodelet:preempt';

// (module (type (func)) (import "nodelet" "preempt" (func (type 0))) (export "preempt" (func 0)))
const HELPER = new WebAssembly.Module(
  Uint8Array.from([
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, 0x01, 0x04, 0x01, 0x60, 0x00, 0x00, 0x02, 0x13, 0x01, 0x07, 0x6e, 0x6f, 0x64, 0x65, 0x6c, 0x65, 0x74, 0x07,
    0x70, 0x72, 0x65, 0x65, 0x6d, 0x70, 0x74, 0x00, 0x00, 0x07, 0x0b, 0x01, 0x07, 0x70, 0x72, 0x65, 0x65, 0x6d, 0x70, 0x74, 0x00, 0x00,
  ]),
);

/**
 * Fills `instance`'s preemption slot, if it has one. The function ends the
 * module (StoppedError, which unwinds its stack) once its container is being
 * stopped, so a busy module stops without its thread being terminated; with a
 * slice clock (a shared thread, `_start` run through WebAssembly.promising) it
 * also suspends the module once it has run {@link SLICE_MS}, until the thread's
 * other work (timers, other modules) has had a turn.
 * @param {WebAssembly.Instance} instance
 * @param {Int32Array} control the container's control words (control[0] != 0: stop)
 * @param {() => void} report publishes the module's memory and CPU time
 * @param {import('./suspending-poll.mjs').SliceClock} [clock] the module's slices on a shared thread
 * @returns {(running: boolean) => void} tells whether `_start` runs (before it, nothing may suspend)
 */
export function fillPreemptSlot(instance, control, report, clock) {
  const table = instance.exports[PREEMPT_TABLE_EXPORT];
  let running = false;
  if (!(table instanceof WebAssembly.Table)) return (r) => void (running = r);
  const preempt = () => {
    if (Atomics.load(control, 0) !== 0) throw new StoppedError();
    report();
    if (!clock || !running || clock.sliceMs() < SLICE_MS) return undefined;
    clock.pause();
    return new Promise((resolve) => setImmediate(resolve)).then(() => {
      clock.resume();
      if (Atomics.load(control, 0) !== 0) throw new StoppedError();
    });
  };
  const imported = clock ? /** @type {Function} */ (/** @type {unknown} */ (new WebAssembly.Suspending(preempt))) : preempt;
  const helper = new WebAssembly.Instance(HELPER, { nodelet: { preempt: imported } });
  table.set(0, /** @type {Function} */ (helper.exports.preempt));
  return (r) => void (running = r);
}
