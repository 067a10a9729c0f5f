// The baseline of figure 10 (bench/figures/cli-run.ts): a WASI command module run once with plain
// node:wasi, as `nodelet run <module> [args...]` runs it — read, compiled, instantiated, _start,
// its exit code as the process's — with nothing else.
import { readFileSync } from 'node:fs';
import { WASI } from 'node:wasi';

const [path, ...args] = process.argv.slice(2);
const wasi = new WASI({ version: 'preview1', args: [path.replace(/^.*\//, ''), ...args], env: {}, returnOnExit: true });
const module = await WebAssembly.compile(readFileSync(path));
const instance = await WebAssembly.instantiate(module, /** @type {WebAssembly.Imports} */ (wasi.getImportObject()));
process.exitCode = wasi.start(instance);
