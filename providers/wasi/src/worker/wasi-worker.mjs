// Worker thread entry: runs one WASI preview1 module (one container), then ends;
// or, started with workerData.shared, many modules at once (a shared thread,
// for BestEffort pods: see ../shared-threads.ts).
// Plain JavaScript so the worker starts without a TypeScript loader; type-checked
// (checkJs) against the message types of ../worker-protocol.ts, which the main
// thread uses too.
//
// Shared mode: every run message carries the module's id (`moduleId`), and the
// messages below for that module go to the parent as { moduleId, message },
// followed by { type: 'done' } once it ended and its descriptors and log are
// closed. Every module runs with JSPI:
// clock sleeps suspend (suspending-poll.mjs), so a sleeping module frees the
// thread; proc_exit ends only its module (jspi.mjs procExitUnwinds); each has
// its own node:wasi instance (its own uvwasi descriptor table) and log writer.
// While it holds a module, the thread also beats a heartbeat into
// workerData.heartbeat (Float64 [0] = epoch ms of the last beat, 0 while it
// holds none, [1] = the largest lag of a beat, reset by the main thread,
// [2] = the share of the last ~second its event loop was busy, written every
// 10 beats): its event-loop delay and use, readable while the thread is busy.
//
// Started ahead of need by the worker pool (../worker-pool.ts) with workerData
// { criLogUrl }; it loads and warms up everything, answers the pool's 'ping'
// with 'ready' and waits for ONE run message (WorkerInput in
// ../worker-protocol.ts). Later messages are ignored: a thread never runs a
// second module.
// Messages to the parent (ModuleMessage in ../worker-protocol.ts), in order:
//   { type: 'ready' }                            answer to 'ping': waiting for the run message
//   { type: 'started', tid }                     instantiated, _start about to run (tid: kernel thread id)
//   { type: 'exit', code }                       _start returned or proc_exit(code)
//   { type: 'trap', message, memoryBytes }       the module trapped / threw
//   { type: 'instantiating' }                    about to instantiate (the module's start function runs)
//   { type: 'resized', seq, outcome, memoryBytes } answer to a memory-limit request (memory-limit.mjs)
//   { type: 'failed', message, reason? }         could not instantiate (before 'started'); reason
//                                                'mount' when a mount's directory is not the one named,
//                                                'port' when a container port cannot be listened on
//   { type: 'warning', message, reason? }        anything worth a log line, any time; with a reason,
//                                                also a Warning event on the pod
// A stopped module (control[0] = 1) unwinds at its next WASI call, closes its
// descriptors and ends without a message. So does a module that ends in any other
// way (returns, proc_exit, traps) once the stop is set: the stop is a kill, and a
// kill wins over whatever the module did after it (e.g. exiting 0 on the end of
// input that closing its stdin at stop gives it) — the container reports 137.
// A run message with `listen` (container ports of a module that imports
// sock_accept) first opens those listeners (wasi-sockets.mjs); with `http` (a
// module importing wasi_experimental_http) the module gets those functions
// (wasi-experimental-http.mjs). Either way the module runs with JSPI (jspi.mjs).
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parentPort, workerData } from 'node:worker_threads';
import {
  captureStdio,
  confinePaths,
  guardReadOnly,
  identifyMounts,
  interruptibleSleep,
  kernelThreadId,
  MountError,
  publishMemory,
  stopOnRequest,
  StoppedError,
  trackDescriptors,
} from './wasi-imports.mjs';
import { wasiSemantics } from './wasi-semantics.mjs';
import { makeSuspending, procExitUnwinds, startPromising, stopSignal } from './jspi.mjs';
import { makeSuspendingTimed, sliceClock, suspendingSleep } from './suspending-poll.mjs';
import { fillPreemptSlot } from './preempt.mjs';
import { listenAll, ListenError } from './wasi-listen.mjs';
import { preopenSockets, SOCKET_ASYNC_IMPORTS } from './wasi-sockets.mjs';
import { EXPERIMENTAL_HTTP_ASYNC, experimentalHttpImports } from './wasi-experimental-http.mjs';
import { RouteClient } from './service-route.mjs';
import { describeTrap } from './trap-report.mjs';
import { memoryLimiter, RESIZE_CONTROL_BYTES } from './memory-limit.mjs';
/** @import { DoneMessage, ModuleMessage, RunMessage, ToWasiWorker, WasiWorkerData } from '../worker-protocol.ts' */
/** @import { Preview1 } from './preview1.ts' */
/** @typedef {(msg: ModuleMessage) => void} Post where a module's messages go */
/** @typedef {{ write(stream: 'stdout' | 'stderr', bytes: Uint8Array): void }} CriLog the part of a container's log writer a trap report uses */

if (!parentPort) throw new Error('wasi-worker.mjs runs as a worker thread');
const port = parentPort;
const data = /** @type {WasiWorkerData} */ (workerData);
/** @type {Post} */
const post = (msg) => port.postMessage(msg);
const shared = data.shared === true;
/** Heartbeat period of a shared thread (ms). */
const BEAT_MS = 100;

// (module (memory (export "memory") 1) (func (export "_start")))
const TINY = Uint8Array.from([
  0, 0x61, 0x73, 0x6d, 1, 0, 0, 0, 1, 4, 1, 0x60, 0, 0, 3, 2, 1, 0, 5, 3, 1, 0, 1, 7, 19, 2, 6, 0x6d, 0x65, 0x6d, 0x6f, 0x72, 0x79, 2, 0, 6, 0x5f, 0x73, 0x74,
  0x61, 0x72, 0x74, 0, 0, 10, 4, 1, 2, 0, 0x0b,
]);
/** @type {WebAssembly.Module | undefined} TINY compiled (tinyModule) */
let tinyCompiled;

// node:wasi warns that it is experimental every time it loads; other warnings go to the provider's log.
process.removeAllListeners('warning');
process.on('warning', (w) => {
  if (w.name !== 'ExperimentalWarning' || !/WASI/.test(w.message)) post({ type: 'warning', message: `${w.name}: ${w.message}` });
});
// Loaded after the listener is in place (its warning is emitted on load).
const { WASI } = await import('node:wasi');
/** @type {{ CriLogWriter: typeof import('@nodelet/plugin-api/v1/toolkit').CriLogWriter }} */
const { CriLogWriter } = await import(data.criLogUrl);
// stdin reads EOF; anything on 1/2 that is not captured goes nowhere. The
// worker closes fds opened through node:fs when it ends (trackUnmanagedFds).
const devNull = fs.openSync('/dev/null', 'r+');
const tid = kernelThreadId(fs);

warmUp();
if (shared) warmUpShared();
/**
 * The heartbeat runs while the thread holds a module (`hold` at its run message, `release` once it is
 * done): a thread without modules wakes no one, and its beat reads 0, which the main thread takes as
 * on time and idle (shared-threads.ts `lateMs`).
 */
let heartbeat = { hold() {}, release() {} };
if (shared && data.heartbeat) {
  const beat = new Float64Array(data.heartbeat);
  const { eventLoopUtilization } = process.getBuiltinModule('node:perf_hooks').performance;
  let last = 0;
  let used = eventLoopUtilization();
  let beats = 0;
  let held = 0;
  /** @type {NodeJS.Timeout | undefined} */
  let timer;
  const tick = () => {
    const now = performance.now();
    const lag = Math.max(0, now - last - BEAT_MS);
    if (lag > beat[1]) beat[1] = lag;
    last = now;
    beat[0] = performance.timeOrigin + now;
    if (++beats % 10 === 0) {
      const u = eventLoopUtilization();
      beat[2] = eventLoopUtilization(u, used).utilization;
      used = u;
    }
  };
  heartbeat = {
    hold() {
      if (held++ > 0) return;
      last = performance.now();
      used = eventLoopUtilization();
      beats = 0;
      beat[0] = performance.timeOrigin + last;
      timer = setInterval(tick, BEAT_MS).unref();
    },
    release() {
      if (--held > 0) return;
      clearInterval(timer);
      beat[0] = 0;
      beat[1] = 0;
      beat[2] = 0;
    },
  };
}

// 'ping' (sent by the pool when it creates the worker) is answered with 'ready':
// the first message a fresh worker receives costs ~1-3 ms more than later ones,
// so the container's run message should not be the first. The listener is
// removed at the run message, which also unrefs the port: the thread ends when
// the module does, and never runs a second one.
port.on(
  'message',
  /** @param {ToWasiWorker} m */ function onMessage(m) {
    if (m.type === 'ping') return post({ type: 'ready' });
    if (m.type !== 'run') return;
    if (shared) {
      const id = m.moduleId;
      /** @param {ModuleMessage | DoneMessage} message */
      const send = (message) => port.postMessage({ moduleId: id, message });
      let done = false;
      heartbeat.hold();
      const onDone = (memoryBytes = 0) => {
        if (done) return;
        done = true;
        heartbeat.release();
        send({ type: 'done', memoryBytes });
      };
      try {
        return runContainer(m, undefined, send, onDone);
      } catch (e) {
        // Whatever one module's set-up throws (its log file cannot be opened, ...) must not end the
        // thread and its other modules.
        send({ type: 'failed', reason: 'wasi', message: describe(e) });
        return onDone();
      }
    }
    port.off('message', onMessage);
    if (!m.listen?.length) return runContainer(m);
    // Each connection costs nodelet two descriptors (the socket, the slot's directory): half the budget.
    listenAll(m.listen, m.fdBudget ? Math.max(1, Math.floor(m.fdBudget.max / 2)) : undefined).then(
      (listeners) => runContainer(m, listeners),
      (e) => post({ type: 'failed', reason: e instanceof ListenError ? 'port' : 'wasi', message: describe(e) }),
    );
  },
);

/**
 * @param {RunMessage} d
 * @param {Awaited<ReturnType<typeof listenAll>>} [listeners] pre-opened sockets: the module runs with JSPI
 * @param {Post} [post] where this module's messages go
 * @param {(memoryBytes?: number) => void} [onDone] on a shared thread: called once the module ended and was cleaned up, with its memory's size
 */
function runContainer(d, listeners, post = (msg) => port.postMessage(msg), onDone) {
  const control = new Int32Array(d.control);
  const log = new CriLogWriter(d.logPath, d.logOptions);
  /** @type {WebAssembly.Memory | undefined} */
  let memory;
  const mem = () => /** @type {WebAssembly.Memory} */ (memory);
  /** @type {WebAssembly.Instance | undefined} */
  let instance;
  // Memory-limit requests (resizeContainer) are applied where the module is not running:
  // at its WASI calls (report, below), when a sleep wakes, and on a JSPI thread's event loop.
  const applyLimit = memoryLimiter(d.control, mem, () => instance?.exports, d.memoryLimitBytes, post);
  let closeDescriptors = () => {};
  const jspi = onDone !== undefined || listeners !== undefined || d.http !== undefined;
  const clock = onDone !== undefined ? sliceClock(d.control) : undefined;
  /** @type {Promise<void> | undefined} the run's promise when it goes on asynchronously (the cleanup waits for it) */
  let finished;
  /** @type {Array<() => void>} */
  const cleanups = [];
  try {
    let wasi;
    let ids;
    // Each pre-opened socket takes a descriptor after the preopened directories: a
    // preopen of an empty directory reserves it in uvwasi's table (wasi-sockets.mjs).
    const sockDir = listeners ? fs.mkdtempSync(path.join(os.tmpdir(), 'nodelet-sock-')) : '';
    const sockFds = (listeners ?? []).map((_, i) => 3 + d.mounts.length + i);
    if (listeners) {
      cleanups.push(() => fs.rmSync(sockDir, { recursive: true, force: true }));
      cleanups.push(() => listeners.forEach((l) => l.server.close()));
    }
    try {
      ids = identifyMounts(d.mounts, fs);
      /** @type {Record<string, string>} */
      const preopens = {};
      for (const m of d.mounts) preopens[m.containerPath] = m.hostPath;
      sockFds.forEach((_, i) => {
        preopens[`/.nodelet-socket-${i}`] = sockDir;
      });
      wasi = new WASI({
        version: 'preview1',
        args: d.argv,
        env: d.env,
        preopens,
        returnOnExit: true,
        // stdin: true: the FIFO nodelet holds open for writing (stdin-pipe.ts); reads block until input.
        stdin: d.stdinPath ? fs.openSync(d.stdinPath, 'r') : devNull,
        stdout: devNull,
        stderr: devNull,
      });
    } catch (e) {
      if (e instanceof MountError) post({ type: 'failed', reason: 'mount', message: e.message });
      else post({ type: 'failed', reason: 'wasi', message: describe(e) });
      return;
    }
    const imports = wasiImports(wasi);
    const w = imports.wasi_snapshot_preview1;
    /** @type {import('./wasi-imports.mjs').HostPaths | undefined} */
    let hostPaths;
    // Closest to node:wasi: every other wrapper forwards to these corrections.
    wasiSemantics(w, mem, () => hostPaths, fs);
    // Preopens get descriptors 3, 4, ... in the order given (uvwasi).
    const preopenFds = d.mounts.map((_, i) => 3 + i);
    const budget = d.fdBudget ? { max: d.fdBudget.max, nodeMax: d.fdBudget.nodeMax, node: new Int32Array(d.fdBudget.node) } : undefined;
    // With JSPI, what a suspended import waits on besides its own I/O: the stop.
    const stop = jspi ? stopSignal(control, applyLimit) : undefined;
    if (stop) {
      cleanups.push(stop.cancel);
      procExitUnwinds(w);
    }
    if (listeners && stop) cleanups.push(preopenSockets(w, mem, listeners, sockFds, stop.promise));
    if (d.http && stop) {
      const h = experimentalHttpImports(mem, d.http, stop.promise, d.routes ? new RouteClient(d.routes) : undefined);
      makeSuspending(h, EXPERIMENTAL_HTTP_ASYNC);
      imports.wasi_experimental_http = h;
    }
    closeDescriptors = trackDescriptors(w, mem, [...preopenFds, ...sockFds], budget);
    captureStdio(w, mem, log, (message, reason) => post({ type: 'warning', message, ...(reason === undefined ? {} : { reason }) }));
    guardReadOnly(
      w,
      mem,
      preopenFds.filter((_, i) => d.mounts[i].readOnly),
    );
    hostPaths = confinePaths(
      w,
      mem,
      d.mounts.map((m, i) => ({ fd: preopenFds[i], hostPath: m.hostPath, name: m.name, containerPath: m.containerPath, ...ids[i] })),
      fs,
      (m) =>
        post({
          type: 'warning',
          reason: 'VolumeReplaced',
          message: `volume ${m.name} mounted at ${m.containerPath}: its directory was renamed or replaced (e.g. by a symlink) after the container started; every access to it is refused`,
        }),
    );
    if (clock && stop) suspendingSleep(w, mem, stop.promise);
    else interruptibleSleep(w, mem, control, applyLimit);
    const publish = publishMemory(d.control, mem);
    const report = clock
      ? () => {
          publish();
          clock.publish();
          applyLimit();
        }
      : () => {
          publish();
          applyLimit();
        };
    stopOnRequest(w, control, report);
    // On a shared thread every import may suspend: the ones that wait, and any call made once the
    // module has run its slice (it yields the thread to the other modules).
    if (clock) makeSuspendingTimed(w, Object.keys(w), clock);
    else if (listeners) makeSuspending(w, SOCKET_ASYNC_IMPORTS);
    for (const m of d.importedMemories) {
      if (!m.import) continue; // importedMemories holds imported memories only
      memory = new WebAssembly.Memory({ initial: m.min, maximum: m.max, shared: m.shared });
      (imports[m.import.module] ??= {})[m.import.name] = memory;
    }
    // Given up on before this thread got to it (a shared thread busy with other modules past the
    // start timeout, or the pod deleted): not started at all.
    if (stopRequested(control)) return;
    // A module's start function runs inside the constructor: the main thread
    // bounds this with its start timeout (it terminates the thread).
    post({ type: 'instantiating' });
    try {
      instance = new WebAssembly.Instance(d.module, imports);
    } catch (e) {
      if (!(e instanceof StoppedError)) post({ type: 'failed', message: describe(e) });
      return;
    }
    if (instance.exports.memory instanceof WebAssembly.Memory) memory = instance.exports.memory;
    report();
    const preempting = fillPreemptSlot(instance, control, report, clock);
    if (jspi) finished = runAsync(wasi, instance, mem, post, clock, control, log, preempting);
    else run(wasi, instance, mem, post, control, log);
  } finally {
    const cleanup = () => {
      closeDescriptors();
      for (const c of cleanups.reverse()) c();
      log.close();
      onDone?.(memory?.buffer.byteLength ?? 0);
    };
    if (finished) finished.finally(cleanup);
    else cleanup();
  }
}

/**
 * Runs `_start` with JSPI (suspending imports): the module may suspend in a
 * sleep, a socket or an outbound request.
 * @param {import('node:wasi').WASI} wasi
 * @param {WebAssembly.Instance} instance
 * @param {() => WebAssembly.Memory} mem
 * @param {Post} post
 * @param {import('./suspending-poll.mjs').SliceClock | undefined} clock on a shared thread: its CPU time slices
 * @param {Int32Array} control
 * @param {CriLog} log the container's log (a trap is written there too)
 * @param {(running: boolean) => void} preempting tells the preemption points (preempt.mjs) that `_start` runs
 */
async function runAsync(wasi, instance, mem, post, clock, control, log, preempting) {
  post({ type: 'started', tid: clock ? undefined : tid });
  clock?.resume();
  preempting(true);
  try {
    const code = await startPromising(wasi, instance, mem());
    clock?.pause();
    if (!stopRequested(control)) post({ type: 'exit', code });
  } catch (e) {
    clock?.pause();
    if (!(e instanceof StoppedError) && !stopRequested(control)) trapped(e, mem, post, log);
  }
}

/**
 * Runs `_start` synchronously: the thread is the module's alone.
 * @param {import('node:wasi').WASI} wasi
 * @param {WebAssembly.Instance} instance
 * @param {() => WebAssembly.Memory} mem
 * @param {Post} post
 * @param {Int32Array} control
 * @param {CriLog} log the container's log (a trap is written there too)
 */
function run(wasi, instance, mem, post, control, log) {
  post({ type: 'started', tid });
  try {
    // A stand-in instance so that a module that imports its memory can start too.
    const code = wasi.start({ exports: { ...instance.exports, memory: mem() } });
    if (!stopRequested(control)) post({ type: 'exit', code });
  } catch (e) {
    if (!(e instanceof StoppedError) && !stopRequested(control)) trapped(e, mem, post, log);
  }
}

/**
 * Whether the module was stopped (control[0] set) by the time it ended: then it
 * reports nothing and the main thread records the kill (137), whatever exit
 * code or trap the module reached after the stop was requested.
 * @param {Int32Array} control
 */
function stopRequested(control) {
  return Atomics.load(control, 0) !== 0;
}

/**
 * Reports a trap: to the main thread (the container's terminated message) and, as wasmtime prints
 * it, to the container's log.
 * @param {unknown} e
 * @param {() => WebAssembly.Memory | undefined} mem
 * @param {Post} post
 * @param {CriLog} log
 */
function trapped(e, mem, post, log) {
  const report = describeTrap(e);
  try {
    log.write('stderr', Buffer.from(`nodelet: the module trapped: ${report}\n`));
  } catch {
    // the log is closed: the container is being stopped
  }
  post({ type: 'trap', message: report, memoryBytes: mem()?.buffer.byteLength ?? 0 });
}

/** @param {unknown} e */
function describe(e) {
  return e instanceof Error ? `${e.name}: ${e.message}` : String(e);
}

// The first use of a code path in a fresh isolate compiles it (lazily): building a
// WASI instance, wrapping its imports, instantiating. Done here on a tiny module
// while the worker is idle, off the container's start (measured: 3.3 → 2.0 ms
// median start). It opens nothing (no preopens; /dev/null is shared).
/**
 * TINY, compiled once for both warm-ups (a function declaration: hoisted above the top-level warm-up calls).
 * @returns {WebAssembly.Module}
 */
function tinyModule() {
  return (tinyCompiled ??= new WebAssembly.Module(TINY));
}

/**
 * node:wasi's import object, typed: `wasi_snapshot_preview1` and any namespace added to it.
 * @param {import('node:wasi').WASI} wasi
 * @returns {WebAssembly.Imports & { wasi_snapshot_preview1: Preview1 }}
 */
function wasiImports(wasi) {
  return /** @type {WebAssembly.Imports & { wasi_snapshot_preview1: Preview1 }} */ (wasi.getImportObject());
}

function warmUp() {
  const d = { module: tinyModule(), control: new SharedArrayBuffer(4), argv: [''] };
  const control = new Int32Array(d.control);
  const wasi = new WASI({ version: 'preview1', args: d.argv, env: {}, preopens: {}, returnOnExit: true, stdin: devNull, stdout: devNull, stderr: devNull });
  const imports = wasiImports(wasi);
  const w = imports.wasi_snapshot_preview1;
  /** @type {WebAssembly.Memory | undefined} */
  let memory;
  const mem = () => /** @type {WebAssembly.Memory} */ (memory);
  wasiSemantics(w, mem, () => undefined, fs);
  trackDescriptors(w, mem, []);
  captureStdio(w, mem, { write() {} }, () => {});
  guardReadOnly(w, mem, [0]);
  confinePaths(w, mem, [], fs);
  interruptibleSleep(w, mem, control);
  stopOnRequest(w, control);
  memory = /** @type {WebAssembly.Memory} */ (new WebAssembly.Instance(d.module, imports).exports.memory);
}

/**
 * A shared thread also runs TINY once through the whole path its modules take
 * (runContainer with JSPI: the log writer, the stop signal, the suspending
 * imports, the promising `_start`, the clean-up), its log going to /dev/null and
 * its messages nowhere. That path's functions are compiled on their first call:
 * without this, the first module on each shared thread took 5-11 ms from the run
 * message to `instantiating` instead of ~2 ms (bench/results/, "The pull beside the TokenRequest").
 * Best effort: a failure here only leaves the path cold.
 */
function warmUpShared() {
  try {
    /** @type {RunMessage} */
    const d = {
      type: 'run',
      module: tinyModule(),
      importedMemories: [],
      argv: [''],
      env: {},
      mounts: [],
      logPath: os.devNull,
      logOptions: {},
      control: new SharedArrayBuffer(RESIZE_CONTROL_BYTES), // CONTROL_BYTES of ../thread-stats.ts
      listen: [],
    };
    const nowhere = () => {};
    runContainer(d, undefined, nowhere, nowhere);
  } catch {
    // the path stays cold; the first module pays for it
  }
}
