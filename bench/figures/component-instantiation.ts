/**
 * Figure 8b, what one instance of the hello wasi:http component costs to make,
 * in isolation (no server, no request): the component transpiled once with jco
 * (as the provider does, `instantiation: async`), then instantiated again and
 * again in a fresh Node process (bench/lib/instantiate-child.mjs) — through
 * jco's instantiate() with preview2-shim, and, as the floor any host of ours
 * would stand on, its largest core module alone with stub imports. An
 * instance per request costs at least this much per request.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { transpileBytes } from '@bytecodealliance/jco-transpile';
import { nodeBinary } from '../../test/harness/node-binary.ts';

/** Result of figure 8b. */
export interface InstantiationResult {
  instances: number;
  /** µs per instance through jco's instantiate() (preview2-shim host). */
  jcoUs: number;
  /** µs per instance of the largest core module alone (stub imports). */
  coreUs: number;
  coreModule: string;
  coreImports: number;
}

/** Transpiles `componentPath` and measures `instances` instantiations of it in a child process. */
export async function measureInstantiation(componentPath: string, instances: number): Promise<InstantiationResult> {
  const dir = mkdtempSync(join(tmpdir(), 'nodelet-bench-instantiate-'));
  try {
    const r = await transpileBytes(readFileSync(componentPath), { name: 'component', instantiation: { tag: 'async' }, emitTypescriptDeclarations: false });
    for (const [name, content] of Object.entries(r.files)) if (!name.includes('/')) writeFileSync(join(dir, name), content);
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
