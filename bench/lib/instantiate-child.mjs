// Run in a fresh process by bench/figures/component-instantiation.ts: instantiates one transpiled
// WASI 0.2 component (its directory: component.js and its core modules, transpiled with jco's
// `instantiation: async`) again and again, and prints JSON: the µs per instance of
//  - `jco`: jco's instantiate() with the core modules compiled once (preview2-shim as the host), and
//  - `core`: the largest core module alone with `new WebAssembly.Instance` and stub imports, the
//    lower bound V8 sets for any host.
// Each after a warm-up; the instances are dropped as they are made (a request's instance lives
// only as long as its request).
//   node instantiate-child.mjs <dir> <count>
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { preview2Imports } from '../../providers/wasi/src/worker/preview2-imports.mjs';

const [dir = '', countArg = '2000'] = process.argv.slice(2);
const count = Number(countArg);
// The host the provider gives components (preview2-shim), made as its component worker makes it.
const { imports } = await preview2Imports();
/** @type {Record<string, WebAssembly.Module>} */
const modules = {};
for (const f of readdirSync(dir).filter((n) => n.endsWith('.wasm'))) modules[f] = new WebAssembly.Module(readFileSync(join(dir, f)));
/** @type {{ instantiate(getCoreModule: (file: string) => WebAssembly.Module, imports: Record<string, unknown>): Promise<unknown> }} */
const component = await import(pathToFileURL(join(dir, 'component.js')).href);
const getCore = (/** @type {string} */ f) => /** @type {WebAssembly.Module} */ (modules[f]);

/**
 * µs per call of `make`, after `count / 10` calls of warm-up.
 * @param {() => unknown} make
 */
async function perInstance(make) {
  for (let i = 0; i < Math.ceil(count / 10); i++) await make();
  const t0 = performance.now();
  for (let i = 0; i < count; i++) await make();
  return Math.round(((performance.now() - t0) * 1000) / count);
}

const jcoUs = await perInstance(() => component.instantiate(getCore, imports));
const largest = Object.entries(modules).sort(([a], [b]) => readFileSync(join(dir, b)).length - readFileSync(join(dir, a)).length)[0];
if (!largest) throw new Error(`no core module in ${dir}`);
const [largestName, largestModule] = largest;
/** @type {WebAssembly.Imports} */
const stubs = {};
for (const imp of WebAssembly.Module.imports(largestModule)) {
  const ns = (stubs[imp.module] ??= {});
  if (imp.kind === 'function') ns[imp.name] = () => 0;
  else if (imp.kind === 'memory') ns[imp.name] = new WebAssembly.Memory({ initial: 1 });
  else if (imp.kind === 'table') ns[imp.name] = new WebAssembly.Table({ initial: 64, element: 'anyfunc' });
  else if (imp.kind === 'global') ns[imp.name] = new WebAssembly.Global({ value: 'i32', mutable: true }, 0);
}
const coreUs = await perInstance(() => new WebAssembly.Instance(largestModule, stubs));
console.log(JSON.stringify({ count, jcoUs, coreUs, coreModule: largestName, coreImports: WebAssembly.Module.imports(largestModule).length }));
