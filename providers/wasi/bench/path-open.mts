/**
 * Cost of a WASI path_open + fd_close pair with the provider's import wrappers
 * (confinement re-checked at every access, descriptor budget): runs the
 * fd-hog fixture's `churn` mode and prints the time per pair.
 *   npx tsx providers/wasi/bench/path-open.mts [pairs=20000] [runs=3] [provider src dir]
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { FakeImages, logText, podContext, providerContext, pulledFixture, spec } from '../test/helpers.ts';

const pairs = Number(process.argv[2] ?? 20_000);
const runs = Number(process.argv[3] ?? 3);
const src = resolve(process.argv[4] ?? join(import.meta.dirname, '..', 'src'));
const { WasiProvider } = await import(pathToFileURL(join(src, 'index.ts')).href);

const dir = mkdtempSync(join(tmpdir(), 'wasi-bench-'));
const vol = join(dir, 'a', 'b', 'vol');
mkdirSync(vol, { recursive: true });
writeFileSync(join(vol, 'f'), 'x');
const p = new WasiProvider();
await p.init(providerContext(new FakeImages()));
const img = await pulledFixture('fd-hog');
const mounts = [{ name: 'v', hostPath: vol, containerPath: '/data', readOnly: false }];
const per: number[] = [];
for (let i = 0; i < runs + 1; i++) {
  const s = spec(img, dir, ['churn', '/data/f', String(pairs)], { mounts });
  const t0 = performance.now();
  const exit = await (await p.startContainer(s, podContext())).exit;
  const ms = performance.now() - t0;
  if (exit.exitCode !== 0) throw new Error(`run failed: ${logText(s.logPath)}`);
  if (i > 0) per.push((ms * 1000) / pairs); // the first run warms up
}
per.sort((a, b) => a - b);
console.log(`path_open+fd_close: ${per.map((x) => x.toFixed(1)).join(' / ')} µs per pair (${pairs} pairs, ${runs} runs, src ${src})`);
await p.shutdown();
rmSync(dir, { recursive: true, force: true });
