/** Real WASI test modules and components, compiled from test/fixtures/{wasm,components} and pushed to a real registry. */
import { readFile } from 'node:fs/promises';
import { buildWasmModule } from '../../harness/wasm-modules.ts';
import { pushImage, pushWasmArtifact, sha256 } from '../../harness/oci-push.ts';
import { buildComponent, type ComponentName } from '../../harness/wasm-components.ts';
import type { TestRegistry } from '../../harness/registry.ts';

/** Builds `test/fixtures/wasm/<name>.c` and pushes it as `<registry>/<name>:v1`; returns the image reference. */
export async function pushModule(reg: TestRegistry, name: string, tag = 'v1'): Promise<string> {
  const bytes = await readFile(await buildWasmModule(name));
  await pushWasmArtifact(reg.host, name, tag, bytes, { format: 'cncf' });
  return `${reg.host}/${name}:${tag}`;
}

/** The toleration every Wasm pod needs for nodelet's default taint. */
export const WASM_TOLERATION = { key: 'kubernetes.io/arch', operator: 'Equal', value: 'wasm32-wasi', effect: 'NoSchedule' } as const;

/**
 * Builds the test component `name` (test/fixtures/components, cargo wasm32-wasip2) and pushes it as
 * `<registry>/<name>:<tag>`: a CNCF Wasm artifact (what `nodelet push` writes), or the layout
 * `wkg oci push` (wasm-pkg-tools, crate oci-wasm) writes: the same media types, config `os: wasip2`
 * with a `component` section and `layerDigests`, no `artifactType`.
 */
export async function pushComponent(reg: TestRegistry, name: ComponentName, format: 'cncf' | 'wkg' = 'cncf', tag = 'v1'): Promise<string> {
  const bytes = await readFile(await buildComponent(name));
  if (format === 'cncf') {
    await pushWasmArtifact(reg.host, name, tag, bytes, { format: 'cncf' });
  } else {
    const config = {
      created: '2026-01-01T00:00:00Z',
      author: null,
      architecture: 'wasm',
      os: 'wasip2',
      layerDigests: [sha256(bytes)],
      component: { exports: [], imports: [], target: null },
    };
    await pushImage(reg.host, name, tag, { mediaType: 'application/vnd.wasm.config.v0+json', bytes: Buffer.from(JSON.stringify(config)) }, [
      { mediaType: 'application/wasm', bytes },
    ]);
  }
  return `${reg.host}/${name}:${tag}`;
}
