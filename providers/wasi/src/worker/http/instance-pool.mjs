// A fresh instance of a wasi:http component for every request, cheaply: the component's core
// module is compiled once; instances are made from it with nodelet's own host (canon.mjs) and,
// after each request, put back in the state the module has right after instantiation — every byte
// of its memory, every mutable global (exported for this by global-exports.ts), its handles
// dropped — as wasmtime's pooling allocator resets a memory slot. A reset instance is
// indistinguishable from a new one except for `memory.size` when a request grew the memory (pages
// cannot be given back): those pages are zeroed, and an instance grown past GROWTH_LIMIT is
// replaced. An instance whose request trapped or timed out is never reused.
//
//   (new) ──acquire──► busy ──release(ok)──► reset ──► idle ──acquire──► busy …
//                        │                     │ grown too far
//                        │ trap / timeout       ▼
//                        └──────────────────► dropped      idle past IDLE_MS (beyond the warm
//                                                          minimum) ──► dropped
//
// Plain JavaScript, typed with JSDoc.
import { Guest } from './canon.mjs';
import { hostFunctions, importKey, suspends } from './host-imports.mjs';
/** @import { CliContext } from './imports-io.mjs' */

/** A request may grow an instance's memory this far past its start before the instance is replaced. */
export const GROWTH_LIMIT = 16 << 20;
/** Idle instances beyond the warm minimum are released after this long. */
export const IDLE_MS = 30_000;
const GLOBAL_EXPORT = /^nodelet:global:\d+$/;
const HANDLE_EXPORT = /^wasi:http\/incoming-handler@0\.2\.\d+#handle$/;

/**
 * What makes a component servable with an instance per request: one core module holding the
 * program (memory, cabi_realloc, the handler), whose every import is a WASI 0.2 function this host
 * implements; any other core module is jco's plumbing for indirect calls, which the direct host
 * does not need.
 * @typedef {{ module: WebAssembly.Module, handleExport: string }} PerRequestPlan
 */

/**
 * The plan for `modules` (jco's core modules by file), or why there is none.
 * @param {Readonly<Record<string, WebAssembly.Module>>} modules
 * @returns {{ plan: PerRequestPlan } | { why: string }}
 */
export function planPerRequest(modules) {
  const mains = Object.entries(modules).filter(([, m]) => WebAssembly.Module.exports(m).some((e) => HANDLE_EXPORT.test(e.name)));
  if (mains.length !== 1) return { why: `${mains.length} core modules export wasi:http/incoming-handler#handle (one is served per request)` };
  const [[mainFile, main]] = /** @type {[[string, WebAssembly.Module]]} */ (mains);
  for (const [file, m] of Object.entries(modules)) {
    if (file === mainFile) continue;
    const plumbing =
      WebAssembly.Module.imports(m).every((i) => i.module === '') &&
      WebAssembly.Module.exports(m).every((e) => e.kind === 'table' || /^\d+$/.test(e.name)) &&
      !WebAssembly.Module.exports(m).some((e) => e.kind === 'memory');
    if (!plumbing) return { why: `the component has more than one core module with code (${file} besides ${mainFile})` };
  }
  const exports = WebAssembly.Module.exports(main);
  if (!exports.some((e) => e.name === 'memory' && e.kind === 'memory')) return { why: 'its core module exports no memory' };
  const fns = hostFunctions(new Guest(), { env: [], args: [], stdout: () => {}, stderr: () => {} });
  for (const imp of WebAssembly.Module.imports(main)) {
    if (imp.kind !== 'function' || !Object.hasOwn(fns, importKey(imp.module, imp.name)))
      return { why: `it imports ${imp.module}#${imp.name}, which is not served per request` };
  }
  return { plan: { module: main, handleExport: /** @type {string} */ (exports.find((e) => HANDLE_EXPORT.test(e.name))?.name) } };
}

/**
 * `fn`, whose promise (when it must wait) also rejects when the guest's request is aborted.
 * @param {Guest} guest @param {Function} fn
 */
function raceAbort(guest, fn) {
  return (/** @type {unknown[]} */ ...args) => {
    const r = fn(...args);
    if (!(r instanceof Promise)) return r;
    guest.onSuspend();
    return Promise.race([r, guest.aborted]);
  };
}

/** One instance and what resetting it needs. */
export class Slot {
  /** @param {Guest} guest @param {WebAssembly.Instance} instance @param {string} handleExport */
  constructor(guest, instance, handleExport) {
    this.guest = guest;
    const ex = instance.exports;
    this.memory = /** @type {WebAssembly.Memory} */ (ex.memory);
    guest.memory = this.memory;
    guest.realloc = /** @type {Guest['realloc']} */ (ex.cabi_realloc);
    /** @type {WebAssembly.Global[]} */
    this.globals = Object.entries(ex)
      .filter(([k]) => GLOBAL_EXPORT.test(k))
      .map(([, g]) => /** @type {WebAssembly.Global} */ (g));
    /** The lowest stack pointer since the last reset, when the module tracks it (stack-tracking.ts). */
    this.stackLow = /** @type {WebAssembly.Global | undefined} */ (ex['nodelet:stack-low']);
    /** `handle(request, responseOut)` through JSPI: a request that waits suspends only its instance. */
    this.handle = /** @type {(req: number, out: number) => Promise<void>} */ (WebAssembly.promising(/** @type {Function} */ (ex[handleExport])));
    /** Memory size when the current request began. */
    this.sizeAtAcquire = 0;
    this.idleSince = 0;
  }
}

/** The state every instance is put back in: memory bytes and mutable globals right after instantiation. */
class Snapshot {
  /** @param {Slot} s */
  constructor(s) {
    this.memory = new Uint8Array(s.memory.buffer).slice();
    this.globals = s.globals.map((g) => g.value);
    /** @type {number | undefined} */
    this.stackLow = s.stackLow?.value;
  }
}

/** Instances of one component for one container. */
export class InstancePool {
  /** @type {Slot[]} */
  #idle = [];
  /** @type {Snapshot | undefined} */
  #snapshot;
  /** Instances alive (idle and busy). */
  size = 0;
  /** Instances made, in all. */
  created = 0;
  /** @type {ReturnType<typeof setInterval>} */
  #trim;

  /**
   * @param {PerRequestPlan} plan
   * @param {CliContext} cli
   * @param {{ warm: number, max: number }} bounds warm: idle instances kept ready; max: instances at once
   */
  constructor(plan, cli, bounds) {
    this.plan = plan;
    this.cli = cli;
    this.bounds = bounds;
    this.#trim = setInterval(() => this.#dropIdle(), IDLE_MS / 2);
    this.#trim.unref();
  }

  /** Makes the first instance (a failure to instantiate surfaces here, before serving) and the warm ones. */
  start() {
    this.#idle.push(this.#make());
    this.fill();
  }

  /** Brings the idle instances up to the warm minimum, off the request path. */
  fill() {
    while (this.#idle.length < this.bounds.warm && this.size < this.bounds.max) this.#idle.push(this.#make());
  }

  /** An instance for a request, or undefined when `max` are busy. @returns {Slot | undefined} */
  acquire() {
    const s = this.#idle.pop() ?? (this.size < this.bounds.max ? this.#make() : undefined);
    if (s) s.sizeAtAcquire = s.memory.buffer.byteLength;
    return s;
  }

  /**
   * Puts `s` back after its request: reset for the next one when the request ended cleanly,
   * dropped otherwise. Returns what the guest left behind (handles still open).
   * @param {Slot} s @param {boolean} clean
   * @returns {object[]}
   */
  release(s, clean) {
    const left = s.guest.table.drain();
    if (clean && this.#reset(s)) {
      s.idleSince = performance.now();
      this.#idle.push(s);
    } else this.size--;
    return left;
  }

  /** Idle instances now. */
  get idle() {
    return this.#idle.length;
  }

  close() {
    clearInterval(this.#trim);
    this.size -= this.#idle.length;
    this.#idle = [];
  }

  #make() {
    const guest = new Guest();
    const fns = hostFunctions(guest, this.cli);
    /** @type {Record<string, Record<string, Function | WebAssembly.Suspending>>} */
    const imports = {};
    for (const imp of WebAssembly.Module.imports(this.plan.module)) {
      const key = importKey(imp.module, imp.name);
      const fn = /** @type {Function} */ (fns[key]);
      (imports[imp.module] ??= {})[imp.name] = suspends(key) ? new WebAssembly.Suspending(raceAbort(guest, fn)) : fn;
    }
    const s = new Slot(guest, new WebAssembly.Instance(this.plan.module, /** @type {WebAssembly.Imports} */ (imports)), this.plan.handleExport);
    this.#snapshot ??= new Snapshot(s);
    this.size++;
    this.created++;
    return s;
  }

  /** @param {Slot} s @returns {boolean} false when `s` must be replaced instead */
  #reset(s) {
    const snap = /** @type {Snapshot} */ (this.#snapshot);
    const mem = new Uint8Array(s.memory.buffer);
    if (mem.length > snap.memory.length + GROWTH_LIMIT) return false;
    // Pages grown during this request: the reset state does not know them (its allocator will grow
    // again), but they held the request's data.
    if (mem.length > s.sizeAtAcquire) mem.fill(0, s.sizeAtAcquire);
    // With the stack tracked, memory below the lowest stack pointer is as it was at the start.
    if (s.stackLow && snap.stackLow !== undefined) {
      const from = Math.max(0, Math.min(s.stackLow.value, snap.stackLow));
      mem.set(snap.memory.subarray(from), from);
      s.stackLow.value = snap.stackLow;
    } else mem.set(snap.memory);
    s.globals.forEach((g, i) => {
      g.value = snap.globals[i];
    });
    return true;
  }

  #dropIdle() {
    const now = performance.now();
    while (this.#idle.length > this.bounds.warm && now - /** @type {Slot} */ (this.#idle[0]).idleSince > IDLE_MS) {
      this.#idle.shift();
      this.size--;
    }
  }
}
