// Worker thread entry: transpiles one WASI 0.2 component with jco
// (@bytecodealliance/jco-transpile, the transpile part of jco without its
// CLI's compilers and bundlers) and posts the files, then ends.
// workerData: { bytes: Uint8Array } (TranspileWorkerData in ../worker-protocol.ts).
// Posts one TranspileReply: { ok: true, result: { files, imports, exports } } or { ok: false, message }.
// Type declarations (.d.ts) are dropped: only component.js and its core modules run.
import { parentPort, workerData } from 'node:worker_threads';
import { transpileBytes } from '@bytecodealliance/jco-transpile';
/** @import { TranspileReply, TranspileWorkerData } from '../worker-protocol.ts' */

if (!parentPort) throw new Error('transpile-worker.mjs runs as a worker thread');
const port = parentPort;
/** @param {TranspileReply} reply */
const reply = (reply) => port.postMessage(reply);

try {
  const r = await transpileBytes(/** @type {TranspileWorkerData} */ (workerData).bytes, {
    name: 'component',
    // imports are handed to instantiate() per container (worker/component-worker.mjs)
    instantiation: { tag: 'async' },
    emitTypescriptDeclarations: false,
  });
  /** @type {Record<string, Uint8Array>} */
  const files = {};
  for (const [name, content] of Object.entries(r.files)) {
    if (!name.includes('/') && !name.endsWith('.d.ts')) files[name] = content;
  }
  reply({ ok: true, result: { files, imports: r.imports, exports: r.exports.map(([name]) => name) } });
} catch (e) {
  reply({ ok: false, message: e instanceof Error ? e.message : String(e) });
}
