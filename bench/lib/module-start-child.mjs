// Run in a fresh process: compile (cold), instantiate with node:wasi imports, and compile again
// (warm: V8's in-process native module cache) one module; prints JSON.
import { readFileSync } from 'node:fs';
import { WASI } from 'node:wasi';

process.removeAllListeners('warning');
const bytes = readFileSync(process.argv[2]);
let t = performance.now();
const mod = await WebAssembly.compile(bytes);
const compileMs = performance.now() - t;
const wasi = new WASI({ version: 'preview1', args: ['m'], env: {}, returnOnExit: true });
t = performance.now();
await WebAssembly.instantiate(mod, /** @type {WebAssembly.Imports} */ (wasi.getImportObject()));
const instantiateMs = performance.now() - t;
t = performance.now();
await WebAssembly.compile(bytes);
const recompileMs = performance.now() - t;
console.log(JSON.stringify({ bytes: bytes.length, compileMs, instantiateMs, recompileMs }));
