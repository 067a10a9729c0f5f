// Run in a fresh process by bench/figures/component-instantiation.ts: makes instances of one
// transpiled WASI 0.2 component (its directory: component.js and its core modules, transpiled with
// jco's `instantiation: async`, and per-request.wasm, its handler's module prepared for reset as the
// provider prepares it) again and again, and prints JSON, µs per:
//  - `jco`: instance through jco's instantiate() with the core modules compiled once (preview2-shim as the host),
//  - `core`: the largest core module alone with `new WebAssembly.Instance` and stub imports (V8's floor),
//  - `host`: new instance through nodelet's own host (providers/wasi/src/worker/http/instance-pool.mjs),
//  - `reset`: putting an instance back in its start state after a `GET /`,
//  - `request`: `GET /` handled on an instance and the reset after it, without HTTP.
// Each after a warm-up of a tenth as many.
//   node instantiate-child.mjs <dir> <count>
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Readable, Writable } from 'node:stream';
import { preview2Imports } from '../../providers/wasi/src/worker/preview2-imports.mjs';
import { InstancePool, planPerRequest } from '../../providers/wasi/src/worker/http/instance-pool.mjs';
import { IncomingRequest, ResponseOutparam } from '../../providers/wasi/src/worker/http/http-types.mjs';

const [dir = '', countArg = '2000'] = process.argv.slice(2);
const count = Number(countArg);
// The host the provider gives components (preview2-shim), made as its component worker makes it.
const { imports } = await preview2Imports();
/** @type {Record<string, WebAssembly.Module>} */
const modules = {};
for (const f of readdirSync(dir).filter((n) => n.endsWith('.wasm') && n !== 'per-request.wasm'))
  modules[f] = new WebAssembly.Module(readFileSync(join(dir, f)));
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

// nodelet's host: the handler's module prepared for reset (per-request.wasm), served from a pool.
const planned = planPerRequest({ 'per-request.wasm': new WebAssembly.Module(readFileSync(join(dir, 'per-request.wasm'))) });
if (!('plan' in planned)) throw new Error(`not servable per request: ${planned.why}`);
const cli = { env: /** @type {Array<[string, string]>} */ ([['POD_NAME', 'bench']]), args: [], stdout() {}, stderr() {} };
const pool = new InstancePool(planned.plan, cli, { warm: 0, max: 1 << 30 });
const hostUs = await perInstance(() => {
  const s = /** @type {import('../../providers/wasi/src/worker/http/instance-pool.mjs').Slot} */ (pool.acquire());
  pool.release(s, false);
});
const slot = /** @type {import('../../providers/wasi/src/worker/http/instance-pool.mjs').Slot} */ (pool.acquire());
const stackTracked = slot.stackLow !== undefined;
pool.release(slot, true);
let resetMs = 0;
/** One `GET /` on the ready instance, and its reset (timed apart). */
const request = async () => {
  const s = /** @type {import('../../providers/wasi/src/worker/http/instance-pool.mjs').Slot} */ (pool.acquire());
  const req = Object.assign(Readable.from([]), { method: 'GET', url: '/', headers: {}, rawHeaders: [] });
  const sink = new Writable({ write: (_c, _e, cb) => cb() });
  const out = new ResponseOutparam((r) => {
    if ('response' in r) r.response.body.output.attach(sink);
  });
  await s.handle(
    s.guest.table.add(new IncomingRequest(/** @type {import('node:http').IncomingMessage} */ (/** @type {unknown} */ (req)), { host: 'bench', port: 80 })),
    s.guest.table.add(out),
  );
  const t = performance.now();
  pool.release(s, true);
  resetMs += performance.now() - t;
};
const requestUs = await perInstance(request);
resetMs = 0;
for (let i = 0; i < count; i++) await request();
const resetUs = Math.round(((resetMs * 1000) / count) * 10) / 10;
console.log(
  JSON.stringify({
    count,
    jcoUs,
    coreUs,
    hostUs,
    resetUs,
    requestUs,
    stackTracked,
    coreModule: largestName,
    coreImports: WebAssembly.Module.imports(largestModule).length,
  }),
);
