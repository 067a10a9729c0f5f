// Suspending clock sleeps and per-module CPU accounting for the modules of a
// shared thread (../shared-threads.ts; wasi-worker.mjs runs every module there
// with JSPI). Plain JavaScript: workers start without a TypeScript loader (see
// README.md); typed with JSDoc.
//
// node:wasi's poll_oneoff is a synchronous C++ call: a module sleeping in it
// holds its thread. Here a clock-only poll_oneoff (what sleep(), nanosleep()
// and usleep() become in wasi-libc) returns a Promise resolved by a timer of
// the thread's event loop; the import is a `WebAssembly.Suspending`, so the
// module's stack is suspended (JSPI) and the thread runs the other modules
// meanwhile. Hand-written: no npm package offers a preview1 poll_oneoff over
// Node timers that plugs into node:wasi's import object.
import { clockNow, ERRNO } from './wasi-imports.mjs';
/** @import { Preview1 } from './preview1.ts' */

const EVENTTYPE_CLOCK = 0;
const SUBCLOCKFLAGS_ABSTIME = 1;

/**
 * Replaces poll_oneoff of `w` with one whose clock-only subscriptions on the
 * realtime or monotonic clock wait on a timer (returning a Promise, so make the
 * import suspending afterwards) and reject with `stopped`'s reason once the
 * container is being stopped. Subscriptions on descriptors, or on the CPU-time
 * clocks, still go to the previous poll_oneoff (sockets' or node:wasi's; files
 * and stdin — /dev/null — are always ready, so that call does not wait).
 * @param {Preview1} w the wasi_snapshot_preview1 import object (edited in place)
 * @param {() => WebAssembly.Memory} mem
 * @param {Promise<never>} stopped rejects once the container is being stopped
 */
export function suspendingSleep(w, mem, stopped) {
  const pollOneoff = w.poll_oneoff;
  /**
   * @param {number} inPtr subscriptions (48 bytes each)
   * @param {number} outPtr events (32 bytes each)
   * @param {number} nsubs
   * @param {number} neventsPtr
   * @returns {number | Promise<number>} the errno, at once or once a deadline passed
   */
  w.poll_oneoff = (inPtr, outPtr, nsubs, neventsPtr) => {
    if (nsubs === 0) return ERRNO.INVAL;
    const dv = new DataView(mem().buffer);
    /** @type {Array<{ userdata: bigint, clock: number, at: bigint }>} */
    const deadlines = [];
    for (let i = 0; i < nsubs; i++) {
      const base = inPtr + 48 * i;
      if (dv.getUint8(base + 8) !== EVENTTYPE_CLOCK) return pollOneoff(inPtr, outPtr, nsubs, neventsPtr);
      const clock = dv.getUint32(base + 16, true);
      if (clock > 1) return pollOneoff(inPtr, outPtr, nsubs, neventsPtr);
      const timeout = dv.getBigUint64(base + 24, true);
      const abs = (dv.getUint16(base + 40, true) & SUBCLOCKFLAGS_ABSTIME) !== 0;
      deadlines.push({ userdata: dv.getBigUint64(base, true), clock, at: abs ? timeout : clockNow(clock) + timeout });
    }
    const answer = () => {
      const due = deadlines.filter((d) => d.at <= clockNow(d.clock));
      if (due.length === 0) return undefined;
      const out = new DataView(mem().buffer);
      due.forEach((d, k) => {
        const base = outPtr + 32 * k;
        out.setBigUint64(base, d.userdata, true);
        out.setUint16(base + 8, ERRNO.SUCCESS, true);
        out.setUint8(base + 10, EVENTTYPE_CLOCK);
        out.setBigUint64(base + 16, 0n, true);
        out.setUint16(base + 24, 0, true);
      });
      out.setUint32(neventsPtr, due.length, true);
      return ERRNO.SUCCESS;
    };
    const now = answer();
    if (now !== undefined) return now;
    return (async () => {
      for (;;) {
        const waitNs = deadlines.reduce((m, d) => {
          const r = d.at - clockNow(d.clock);
          return r < m ? r : m;
        }, 2n ** 63n);
        /** @type {NodeJS.Timeout | undefined} */
        let timer;
        /** @type {Promise<void>} */
        const slept = new Promise((resolve) => {
          timer = setTimeout(resolve, Math.max(1, Math.ceil(Number(waitNs) / 1e6)));
        });
        try {
          await Promise.race([slept, stopped]);
        } finally {
          clearTimeout(timer);
        }
        const rc = answer();
        if (rc !== undefined) return rc;
      }
    })();
  };
}

/**
 * Byte offset in the control buffer of a shared-thread module's CPU time: two
 * Float64, the ns of its ended slices and the epoch ms its current slice began
 * (0 when suspended), so the main thread can count a slice still running.
 */
export const CPU_SLOT_OFFSET = 16;

/**
 * The CPU time of one module on a shared thread: the wall time of its run
 * slices (from `_start` or a resumption to the next suspension or its end),
 * published in the control buffer at {@link CPU_SLOT_OFFSET} for the main
 * thread's `stats()` (which adds the running slice: a module busy without
 * WASI calls is counted too). On a thread shared by several busy modules the slices
 * include time the kernel gave to other threads: an upper bound.
 * @param {SharedArrayBuffer} control
 */
export function sliceClock(control) {
  const slot = control.byteLength >= CPU_SLOT_OFFSET + 16 ? new Float64Array(control, CPU_SLOT_OFFSET, 2) : new Float64Array(2);
  let total = 0;
  /** @type {number | undefined} performance.now() when the current slice began */
  let since;
  const publish = () => {
    slot[0] = total;
    slot[1] = since === undefined ? 0 : performance.timeOrigin + since;
  };
  return {
    /** The module runs (started or resumed). */
    resume() {
      since = performance.now();
      publish();
    },
    /** The module is suspended or ended. */
    pause() {
      if (since !== undefined) total += (performance.now() - since) * 1e6;
      since = undefined;
      publish();
    },
    publish,
    /** How long the current slice has run (ms), 0 when suspended. */
    sliceMs() {
      return since === undefined ? 0 : performance.now() - since;
    },
  };
}

/** @typedef {ReturnType<typeof sliceClock>} SliceClock */

/**
 * How long a module on a shared thread may run before it yields the thread at its next WASI call:
 * a module writing 1 GB to stdout (or opening files by the thousand) makes WASI calls all the time
 * but never waits, and without this held its thread — every other module of it — for seconds.
 */
export const SLICE_MS = 20;

/**
 * Like jspi.mjs makeSuspending, but a call that suspends pauses `clock` until its Promise settles
 * (the module resumes right after), and a call made after the module's slice has run
 * {@link SLICE_MS} suspends it until the thread's other work (timers, other modules) has had a turn
 * (setImmediate): cooperative time slicing at WASI calls. Give it every import of the module.
 * @param {Preview1} w
 * @param {Iterable<string>} names
 * @param {SliceClock} clock
 */
export function makeSuspendingTimed(w, names, clock) {
  for (const name of names) {
    const fn = w[name];
    if (typeof fn !== 'function') continue;
    const timed = (/** @type {unknown[]} */ ...a) => {
      const r = fn(...a);
      if (!(r instanceof Promise)) {
        if (clock.sliceMs() < SLICE_MS) return r;
        clock.pause();
        return new Promise((resolve) => setImmediate(resolve)).then(() => {
          clock.resume();
          return r;
        });
      }
      clock.pause();
      return r.finally(() => clock.resume());
    };
    // A Suspending is not a function to JavaScript, but Wasm imports it as one.
    w[name] = /** @type {Function} */ (/** @type {unknown} */ (new WebAssembly.Suspending(timed)));
  }
}
