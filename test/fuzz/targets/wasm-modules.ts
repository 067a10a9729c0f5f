/**
 * Wasm modules as static pods' `file:` images: random bytes, a valid module cut
 * short or with flipped bytes, huge declared memories, deep recursion, endless
 * loops (Running, then removed within the grace period), traps, unknown
 * imports, a memory grown until the limit, deeply nested blocks.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { FuzzEnvironment } from '../environment.ts';
import type { Outcome } from '../outcome.ts';
import { runPodBatches, type PodInput } from '../pod-batch.ts';
import type { Rng } from '../rng.ts';
import { BODIES, wasmModule } from '../wasm-encoder.ts';

const HELLO = readFileSync(resolve(import.meta.dirname, '..', '..', '..', 'examples', 'static-pods', 'hello.wasm'));

/** Module generators: a name and the bytes, plus whether it runs until removed. */
const MODULES: Array<(r: Rng) => { name: string; bytes: Buffer; forever?: boolean; memoryLimit?: string }> = [
  (r) => ({ name: 'random bytes', bytes: r.bytes(r.int(0, 2048)) }),
  (r) => ({ name: 'magic + random', bytes: Buffer.concat([HELLO.subarray(0, 8), r.bytes(r.int(1, 512))]) }),
  (r) => {
    const at = r.int(8, HELLO.length - 1);
    return { name: `hello cut at ${at}`, bytes: HELLO.subarray(0, at) };
  },
  (r) => {
    const b = Buffer.from(HELLO);
    const n = r.int(1, 8);
    for (let i = 0; i < n; i++) b[r.int(8, b.length - 1)] = r.int(0, 255);
    return { name: `hello with ${n} flipped bytes`, bytes: b };
  },
  (r) => ({ name: 'memory of 65536 pages', bytes: wasmModule({ start: BODIES.ok(), memory: { min: r.pick([16_384, 65_536]) } }) }),
  () => ({ name: 'endless loop', bytes: wasmModule({ start: BODIES.loop() }), forever: true }),
  () => ({ name: 'deep recursion', bytes: wasmModule({ start: BODIES.recurse(0) }) }),
  () => ({ name: 'unreachable', bytes: wasmModule({ start: BODIES.trap() }) }),
  () => ({ name: 'unknown import', bytes: wasmModule({ start: BODIES.ok(), unknownImport: true }) }),
  () => ({ name: 'grows memory under a 64Mi limit', bytes: wasmModule({ start: BODIES.grow(), memory: { min: 1 } }), memoryLimit: '64Mi' }),
  () => ({ name: 'grows memory to its declared max', bytes: wasmModule({ start: BODIES.grow(), memory: { min: 1, max: 64 } }) }),
  (r) => {
    const depth = r.pick([1000, 50_000]);
    return { name: `${depth} nested blocks`, bytes: wasmModule({ start: BODIES.nested(depth) }) };
  },
  () => ({ name: 'valid, exits 0', bytes: wasmModule({ start: BODIES.ok() }) }),
  () => ({ name: 'empty file', bytes: Buffer.alloc(0) }),
];

/** `count` module inputs. */
export function wasmModuleInputs(rng: Rng, count: number): PodInput[] {
  const out: PodInput[] = [];
  for (let i = 0; i < count; i++) {
    const id = `wm${rng.seed % 1000}-${i}`;
    const k = rng.int(0, MODULES.length - 1);
    const m = MODULES[k]!(rng);
    const limits = m.memoryLimit ? `, "resources": {"limits": {"memory": "${m.memoryLimit}"}}` : '';
    out.push({
      input: `${m.name} (#${k}, ${id})`,
      file: `${id}.yaml`,
      podName: id,
      runsForever: m.forever,
      files: { [`${id}.wasm`]: m.bytes },
      manifest: `{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "${id}"}, "spec": {"restartPolicy": "Never", "terminationGracePeriodSeconds": 1, "containers": [{"name": "m", "image": "file:${id}.wasm"${limits}}]}}\n`,
    });
  }
  return out;
}

/** Runs `count` module inputs. */
export async function fuzzWasmModules(env: FuzzEnvironment, rng: Rng, count: number, record: (o: Outcome) => void): Promise<void> {
  await runPodBatches(env, 'wasm-modules', wasmModuleInputs(rng, count), record, { batchSize: 10 });
}
