// Worker thread entry: runs one WASI preview1 module (one container).
// Plain JavaScript so the worker starts without a TypeScript loader.
//
// workerData: see WorkerInput in ../container-runner.ts.
// Messages to the parent, in order:
//   { type: 'started' }                          instantiated, _start about to run
//   { type: 'exit', code }                       _start returned or proc_exit(code)
//   { type: 'trap', message, memoryBytes }       the module trapped / threw
//   { type: 'failed', message }                  could not instantiate (before 'started')
//   { type: 'warning', message }                 anything worth a log line, any time
// A stopped module (control[0] = 1) unwinds at its next WASI call, closes its
// descriptors and ends without a message.
import * as fs from 'node:fs';
import { parentPort, workerData } from 'node:worker_threads';
import {
  captureStdio, confinePaths, guardReadOnly, interruptibleSleep, stopOnRequest, StoppedError, trackDescriptors,
} from './wasi-imports.mjs';

const post = (msg) => parentPort.postMessage(msg);

// node:wasi warns that it is experimental every time it loads; other warnings go to the provider's log.
process.removeAllListeners('warning');
process.on('warning', (w) => {
  if (w.name !== 'ExperimentalWarning' || !/WASI/.test(w.message)) post({ type: 'warning', message: `${w.name}: ${w.message}` });
});
// Loaded after the listener is in place (its warning is emitted on load).
const { WASI } = await import('node:wasi');
const d = workerData;
const { CriLogWriter } = await import(d.criLogUrl);
const control = new Int32Array(d.control);

const log = new CriLogWriter(d.logPath, d.logOptions);
// stdin reads EOF; anything on 1/2 that is not captured goes nowhere. The
// worker closes fds opened through node:fs when it ends (trackUnmanagedFds).
const devNull = fs.openSync('/dev/null', 'r+');
const preopens = {};
for (const m of d.mounts) preopens[m.containerPath] = m.hostPath;
const wasi = new WASI({
  version: 'preview1', args: d.argv, env: d.env, preopens, returnOnExit: true,
  stdin: devNull, stdout: devNull, stderr: devNull,
});

let memory;
const mem = () => memory;
const imports = wasi.getImportObject();
const w = imports.wasi_snapshot_preview1;
// Preopens get descriptors 3, 4, ... in the order given (uvwasi).
const preopenFds = d.mounts.map((_, i) => 3 + i);
const closeDescriptors = trackDescriptors(w, mem, preopenFds);
try {
  captureStdio(w, mem, log, (message) => post({ type: 'warning', message }));
  guardReadOnly(w, mem, preopenFds.filter((_, i) => d.mounts[i].readOnly));
  confinePaths(w, mem, d.mounts.map((m, i) => ({ fd: preopenFds[i], hostPath: m.hostPath })), fs);
  interruptibleSleep(w, mem, control);
  stopOnRequest(w, control);
  run(await instantiate());
} finally {
  closeDescriptors();
  log.close();
}

async function instantiate() {
  for (const m of d.importedMemories) {
    memory = new WebAssembly.Memory({ initial: m.min, maximum: m.max, shared: m.shared });
    (imports[m.import.module] ??= {})[m.import.name] = memory;
  }
  try {
    return await WebAssembly.instantiate(d.module, imports);
  } catch (e) {
    post({ type: 'failed', message: describe(e) });
    return undefined;
  }
}

function run(instance) {
  if (instance === undefined) return;
  if (instance.exports.memory instanceof WebAssembly.Memory) memory = instance.exports.memory;
  post({ type: 'started' });
  try {
    // A stand-in instance so that a module that imports its memory can start too.
    const code = wasi.start({ exports: { ...instance.exports, memory } });
    post({ type: 'exit', code });
  } catch (e) {
    if (!(e instanceof StoppedError)) post({ type: 'trap', message: describe(e), memoryBytes: memory?.buffer.byteLength ?? 0 });
  }
}

function describe(e) {
  return e instanceof Error ? `${e.name}: ${e.message}` : String(e);
}
