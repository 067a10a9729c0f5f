// Runs a WASI command module with plain node:wasi (compile + instantiate + _start) and prints the
// milliseconds of the _start call alone.
import { readFileSync } from 'node:fs';
import { WASI } from 'node:wasi';

const [path, ...args] = process.argv.slice(2);
const mod = await WebAssembly.compile(readFileSync(path));
const wasi = new WASI({ version: 'preview1', args: ['m', ...args], env: {}, returnOnExit: true, stdout: 2 });
const inst = await WebAssembly.instantiate(mod, /** @type {WebAssembly.Imports} */ (wasi.getImportObject()));
const t = performance.now();
wasi.start(inst);
console.log(String(performance.now() - t));
