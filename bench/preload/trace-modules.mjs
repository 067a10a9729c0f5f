// Bench-only preload for the nodelet process (NODE_OPTIONS=--import=<this file>).
// Appends one JSON line per event to $NODELET_BENCH_TRACE:
//   {"ev":"compile","ms":…,"bytes":…}                       WebAssembly.compile in the main thread
//   {"ev":"worker","logPath":…,"t0":…,"startMs":…}           new Worker → its 'started' message
//   {"ev":"exit","logPath":…,"runMs":…}                       'started' → worker 'exit'
//   {"ev":"mem",…process.memoryUsage(),spacesKiB,codeKiB}      on SIGUSR2
// t0 is epoch ms; durations are from performance.now(). It changes nothing else.
import { appendFileSync } from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';
import workerThreads from 'node:worker_threads';

const file = process.env.NODELET_BENCH_TRACE;
if (file && workerThreads.isMainThread) {
  const write = (o) => { try { appendFileSync(file, `${JSON.stringify(o)}\n`); } catch { /* best effort */ } };
  const compile = WebAssembly.compile;
  WebAssembly.compile = async function tracedCompile(bytes) {
    const t = performance.now();
    const m = await compile.call(WebAssembly, bytes);
    write({ ev: 'compile', ms: performance.now() - t, bytes: bytes.byteLength });
    return m;
  };
  const Base = workerThreads.Worker;
  class TracedWorker extends Base {
    constructor(url, opts) {
      super(url, opts);
      const logPath = opts?.workerData?.logPath;
      if (typeof logPath !== 'string') return;
      const t = performance.now();
      const t0 = Date.now();
      let started;
      const onMessage = (m) => {
        if (m?.type !== 'started') return;
        started = performance.now();
        this.off('message', onMessage);
        write({ ev: 'worker', logPath, t0, startMs: started - t });
      };
      this.on('message', onMessage);
      this.once('exit', () => { if (started !== undefined) write({ ev: 'exit', logPath, runMs: performance.now() - started }); });
    }
  }
  workerThreads.Worker = TracedWorker;
  syncBuiltinESMExports();
  // On SIGUSR2: where the main thread's memory is (V8 heap spaces, external, array buffers).
  process.on('SIGUSR2', async () => {
    const v8 = await import('node:v8');
    const spaces = Object.fromEntries(v8.getHeapSpaceStatistics().map((s) => [s.space_name, Math.round(s.space_used_size / 1024)]));
    const code = v8.getHeapCodeStatistics();
    write({ ev: 'mem', ...process.memoryUsage(), spacesKiB: spaces, codeKiB: Math.round((code.code_and_metadata_size + code.bytecode_and_metadata_size) / 1024) });
  });
}
