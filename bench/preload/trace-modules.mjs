// Bench-only preload for the nodelet process (NODE_OPTIONS=--import=<this file>).
// Appends one JSON line per event to $NODELET_BENCH_TRACE:
//   {"ev":"compile","ms":…,"bytes":…}                       WebAssembly.compile in the main thread
//   {"ev":"worker","logPath":…,"t0":…,"startMs":…}           container start (nodelet:wasi:container-start)
//   {"ev":"exit","logPath":…,"runMs":…}                       module running → worker gone (…:container-end)
//   {"ev":"mem",…process.memoryUsage(),spacesKiB,codeKiB}      on SIGUSR2
// t0 is epoch ms; durations are from performance.now(). It changes nothing else.
import { appendFileSync } from 'node:fs';
import workerThreads from 'node:worker_threads';
/** @import { ContainerEndEvent, ContainerStartEvent } from '../../providers/wasi/src/module-run.ts' */

const file = process.env.NODELET_BENCH_TRACE;
if (file && workerThreads.isMainThread) {
  const write = (/** @type {object} */ o) => {
    try {
      appendFileSync(file, `${JSON.stringify(o)}\n`);
    } catch {
      /* best effort */
    }
  };
  const compile = WebAssembly.compile;
  WebAssembly.compile = async function tracedCompile(bytes) {
    const t = performance.now();
    const m = await compile.call(WebAssembly, bytes);
    write({ ev: 'compile', ms: performance.now() - t, bytes: bytes.byteLength });
    return m;
  };
  // Container starts and ends as the WASI provider publishes them (its workers are pooled, so
  // `new Worker` is not the start of a container): startMs = taking a worker → module running.
  const dc = await import('node:diagnostics_channel');
  dc.subscribe('nodelet:wasi:container-start', (message) => {
    const e = /** @type {ContainerStartEvent} */ (message);
    write({ ev: 'worker', logPath: e.logPath, t0: Date.now() - e.startMs, startMs: e.startMs, waitMs: e.waitMs });
  });
  dc.subscribe('nodelet:wasi:container-end', (message) => {
    const e = /** @type {ContainerEndEvent} */ (message);
    if (e.runMs !== undefined) write({ ev: 'exit', logPath: e.logPath, runMs: e.runMs });
  });
  // On SIGUSR2: where the main thread's memory is (V8 heap spaces, external, array buffers).
  process.on('SIGUSR2', async () => {
    const v8 = await import('node:v8');
    const spaces = Object.fromEntries(v8.getHeapSpaceStatistics().map((s) => [s.space_name, Math.round(s.space_used_size / 1024)]));
    const committed = Object.fromEntries(v8.getHeapSpaceStatistics().map((s) => [s.space_name, Math.round(s.space_size / 1024)]));
    const code = v8.getHeapCodeStatistics();
    write({
      ev: 'mem',
      ...process.memoryUsage(),
      spacesKiB: spaces,
      spacesCommittedKiB: committed,
      codeKiB: Math.round((code.code_and_metadata_size + code.bytecode_and_metadata_size) / 1024),
    });
  });
}
