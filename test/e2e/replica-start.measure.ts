/**
 * Measures what starting the 1st and the 100th replica of one module costs on
 * nodelet's start path (compile-cache effect): per replica, the image pull
 * (IfNotPresent) through the real OciImageService from a real docker-registry,
 * then the WASI provider's startContainer until the module runs. Replica 1 pays
 * the download and `WebAssembly.compile`; later ones hit the image store (memory)
 * and the compiled-module cache and only start a worker.
 *
 *   npx tsx test/e2e/replica-start.measure.ts [module=sleep] [replicas=100]
 *
 * Prints one JSON line. Not a test: it times things, so it asserts nothing.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { OciImageService } from '../../core/images/image-service.ts';
import { WasiProvider } from '../../providers/wasi/src/index.ts';
import { podContext, providerContext, spec } from '../../providers/wasi/test/helpers.ts';
import { pushWasmArtifact } from '../harness/oci-push.ts';
import { startRegistry } from '../harness/registry.ts';
import { buildWasmModule } from '../harness/wasm-modules.ts';

const name = process.argv[2] ?? 'sleep';
const replicas = Number(process.argv[3] ?? 100);
const reg = await startRegistry();
const root = mkdtempSync(join(tmpdir(), 'nodelet-measure-'));
try {
  const bytes = readFileSync(await buildWasmModule(name));
  await pushWasmArtifact(reg.host, `measure/${name}`, 'v1', bytes);
  const images = await OciImageService.open({ rootDir: root });
  const provider = new WasiProvider();
  await provider.init(providerContext(images, root));
  const ctx = podContext();
  const image = `${reg.host}/measure/${name}:v1`;
  const ms: { pull: number; start: number; total: number }[] = [];
  const running = [];
  for (let i = 0; i < replicas; i++) {
    const t0 = performance.now();
    const pulled = await provider.pullImage(image, { pullPolicy: 'IfNotPresent', credentials: [] }, ctx);
    const t1 = performance.now();
    running.push(await provider.startContainer(spec(pulled, root, ['3600']), ctx));
    const t2 = performance.now();
    ms.push({ pull: t1 - t0, start: t2 - t1, total: t2 - t0 });
  }
  const r1 = (v: number) => Math.round(v * 100) / 100;
  const pick = (i: number) => ({ pullMs: r1(ms[i]!.pull), startMs: r1(ms[i]!.start), totalMs: r1(ms[i]!.total) });
  const rest = ms
    .slice(1)
    .map((m) => m.total)
    .sort((a, b) => a - b);
  console.log(
    JSON.stringify({
      module: name,
      moduleBytes: bytes.length,
      replicas,
      first: pick(0),
      last: pick(replicas - 1),
      medianOfOthersMs: r1(rest[Math.floor(rest.length / 2)] ?? NaN),
      registryBlobGets: await reg.blobGets(`measure/${name}`),
    }),
  );
  await provider.shutdown();
} finally {
  await reg.stop();
  rmSync(root, { recursive: true, force: true });
}
