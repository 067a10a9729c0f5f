/**
 * Figure 8b, what an instance of the hello wasi:http component costs, in isolation (no server):
 * the component transpiled once with jco (as the provider does, `instantiation: async`), then, in
 * a fresh Node process (bench/lib/instantiate-child.mjs):
 *  - jco's instantiate() with preview2-shim (what serving through jco's bindings would pay per instance),
 *  - its largest core module alone with stub imports (V8's floor for making an instance),
 *  - a new instance through nodelet's own host (instance-pool.mjs), made when no reset one is ready,
 *  - putting an instance back in its start state after a request (what each request pays), and
 *  - one `GET /` on an instance, handler and reset, without HTTP.
 * The core module is prepared as the provider prepares it (global-exports.ts, stack-tracking.ts).
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { transpileBytes } from '@bytecodealliance/jco-transpile';
import { nodeBinary } from '../../test/harness/node-binary.ts';
import { exportMutableGlobals } from '../../providers/wasi/src/global-exports.ts';
import { trackStack } from '../../providers/wasi/src/stack-tracking.ts';

/** Result of figure 8b. */
export interface InstantiationResult {
  instances: number;
  /** µs per instance through jco's instantiate() (preview2-shim host). */
  jcoUs: number;
  /** µs per instance of the largest core module alone (stub imports). */
  coreUs: number;
  /** µs per new instance through nodelet's host. */
  hostUs: number;
  /** µs to put an instance back in its start state after a request. */
  resetUs: number;
  /** µs per `GET /` on an instance (handler and reset, no HTTP). */
  requestUs: number;
  /** The core module records its stack depth (only the stack used is reset). */
  stackTracked: boolean;
  coreModule: string;
  coreImports: number;
}

/** Transpiles `componentPath` and measures `instances` instantiations of it in a child process. */
export async function measureInstantiation(componentPath: string, instances: number): Promise<InstantiationResult> {
  const dir = mkdtempSync(join(tmpdir(), 'nodelet-bench-instantiate-'));
  try {
    const r = await transpileBytes(readFileSync(componentPath), { name: 'component', instantiation: { tag: 'async' }, emitTypescriptDeclarations: false });
    for (const [name, content] of Object.entries(r.files)) if (!name.includes('/')) writeFileSync(join(dir, name), content);
    // The module the provider serves per request: the one exporting the handler, prepared for reset.
    for (const [name, content] of Object.entries(r.files)) {
      if (
        !name.endsWith('.wasm') ||
        !WebAssembly.Module.exports(new WebAssembly.Module(content as Uint8Array<ArrayBuffer>)).some((e) => e.name.includes('incoming-handler'))
      )
        continue;
      writeFileSync(join(dir, 'per-request.wasm'), trackStack(exportMutableGlobals(content).bytes).bytes);
    }
    const out = execFileSync(nodeBinary(), [join(import.meta.dirname, '..', 'lib', 'instantiate-child.mjs'), dir, String(instances)], {
      encoding: 'utf8',
      timeout: 120_000,
      cwd: join(import.meta.dirname, '..', '..'),
    });
    const last = out.trim().split('\n').at(-1) ?? '';
    return { instances, ...(JSON.parse(last) as Omit<InstantiationResult, 'instances'>) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
