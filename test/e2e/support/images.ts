/** Real WASI test modules, compiled from test/fixtures/wasm and pushed to a real registry. */
import { readFile } from 'node:fs/promises';
import { buildWasmModule } from '../../harness/wasm-modules.ts';
import { pushWasmArtifact } from '../../harness/oci-push.ts';
import type { TestRegistry } from '../../harness/registry.ts';

/** Builds `test/fixtures/wasm/<name>.c` and pushes it as `<registry>/<name>:v1`; returns the image reference. */
export async function pushModule(reg: TestRegistry, name: string, tag = 'v1'): Promise<string> {
  const bytes = await readFile(await buildWasmModule(name));
  await pushWasmArtifact(reg.host, name, tag, bytes, { format: 'cncf' });
  return `${reg.host}/${name}:${tag}`;
}

/** The toleration every Wasm pod needs for nodelet's default taint. */
export const WASM_TOLERATION = { key: 'kubernetes.io/arch', operator: 'Equal', value: 'wasm32-wasi', effect: 'NoSchedule' } as const;
