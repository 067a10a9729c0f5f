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
  reply({ ok: true, result: { files, imports: versioned(r.imports, files), exports: r.exports.map(([name]) => name) } });
} catch (e) {
  reply({ ok: false, message: e instanceof Error ? e.message : String(e) });
}

/**
 * jco names the imported interfaces without their versions; the core modules' imports carry them
 * (`wasi:keyvalue/store@0.2.0-draft2`), and the platform interfaces' drafts differ by version. Each
 * interface is given with every version a core module imports from it (as jco names it when none does:
 * the component imports nothing of it that runs).
 * @param {readonly string[]} names @param {Readonly<Record<string, Uint8Array>>} files
 */
function versioned(names, files) {
  /** @type {Map<string, Set<string>>} */
  const seen = new Map();
  for (const [file, bytes] of Object.entries(files)) {
    if (!file.endsWith('.wasm')) continue;
    for (const { module } of WebAssembly.Module.imports(new WebAssembly.Module(/** @type {Uint8Array<ArrayBuffer>} */ (bytes)))) {
      const at = module.lastIndexOf('@');
      if (at <= 0) continue;
      const base = module.slice(0, at);
      if (!seen.has(base)) seen.set(base, new Set());
      seen.get(base)?.add(module);
    }
  }
  return names.flatMap((n) => [...(seen.get(n) ?? [n])]);
}
