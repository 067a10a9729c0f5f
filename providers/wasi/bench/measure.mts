// Measures module start latency (cold compile vs cached, sequential and 100 at once),
// the RSS of an idle pooled worker and the RSS per sleeping module.
// Usage: npx tsx providers/wasi/bench/measure.mts [count] [limits-json|default|none] [pool size] [max booting]
import { WasiProvider, DEFAULT_RESOURCE_LIMITS } from '../src/index.ts';
import { FakeImages, podContext, providerContext, scratch, spec, pulledFixture } from '../test/helpers.ts';

const n = Number(process.argv[2] ?? 50);
const arg = process.argv[3] ?? 'default';
const pool = process.argv[4] === undefined ? undefined : Number(process.argv[4]);
const maxBootingWorkers = process.argv[5] === undefined ? undefined : Number(process.argv[5]);
const resourceLimits = arg === 'default' ? DEFAULT_RESOURCE_LIMITS : arg === 'none' ? {} : JSON.parse(arg);
const make = async (workerPool: number | undefined = pool) => {
  const p = new WasiProvider({ resourceLimits, workerPool, maxBootingWorkers });
  await p.init(providerContext(new FakeImages()));
  return p;
};
const { dir, cleanup } = scratch();
const ctx = podContext();
const img = await pulledFixture('sleep');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const settle = () => sleep(1500);
const rss = () => process.memoryUsage().rss;
const gc = () => (globalThis as { gc?: () => void }).gc?.();
const q = (xs: number[], f: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(f * xs.length))]!;
const r1 = (v: number) => +v.toFixed(1);

// RSS per idle pooled worker, first (no worker has run in this process yet): 8 idle workers vs none.
await settle();
const idleBase = rss();
const idleK = 8;
let p = await make(idleK);
p.workerPool.warm();
await p.workerPool.settled();
await settle();
const idleWorkerMiB = +((rss() - idleBase) / idleK / 1048576).toFixed(2);
await p.shutdown();

const timed = async () => {
  const t = performance.now();
  const c = await p.startContainer(spec(img, dir, ['3600']), ctx);
  return { c, ms: performance.now() - t };
};
p = await make();
// Cold: the first start compiles the module.
const first = await timed();
await first.c.stop(0);
// Sequential, cached, 200 ms apart (a quiet node: the pool has time to refill).
const spaced: number[] = [];
for (let i = 0; i < 20; i++) {
  await sleep(200);
  const s = await timed();
  spaced.push(s.ms);
  await s.c.stop(0);
}
// Sequential back to back (the pool cannot keep up).
const b2b: number[] = [];
const b2bRunning = [];
for (let i = 0; i < 20; i++) {
  const s = await timed();
  b2b.push(s.ms);
  b2bRunning.push(s.c);
}
await Promise.all(b2bRunning.map((c) => c.stop(0)));
// 100 at once.
await settle();
const burst = await Promise.all(Array.from({ length: 100 }, () => timed()));
await Promise.all(burst.map((s) => s.c.stop(0)));
await p.shutdown();

// RSS per sleeping module (the pool filled before the baseline).
p = await make();
await p.startContainer(spec(img, dir, ['3600']), ctx).then((c) => c.stop(0));
await p.workerPool.settled();
gc();
await settle();
const base = rss();
let t = performance.now();
const running = [];
for (let i = 0; i < n; i++) running.push(await p.startContainer(spec(img, dir, ['3600']), ctx));
const startAll = performance.now() - t;
await settle();
const rssAfter = rss();
if (p.runningCount !== n) throw new Error(`only ${p.runningCount} of ${n} modules still run (worker limits too small?)`);
t = performance.now();
await p.shutdown();
const stopAll = performance.now() - t;
const burstMs = burst.map((s) => s.ms);
console.log(
  JSON.stringify({
    limits: resourceLimits,
    pool: pool ?? 'default',
    maxBooting: maxBootingWorkers ?? 'default',
    coldStartMs: r1(first.ms),
    cachedSpacedMs: { p50: r1(q(spaced, 0.5)), p90: r1(q(spaced, 0.9)) },
    cachedBackToBackMs: { p50: r1(q(b2b, 0.5)), p90: r1(q(b2b, 0.9)) },
    burst100Ms: { first: r1(Math.min(...burstMs)), p50: r1(q(burstMs, 0.5)), p90: r1(q(burstMs, 0.9)), last: r1(Math.max(...burstMs)) },
    idleWorkerMiB,
    n,
    perModuleStartMs: r1(startAll / n),
    rssPerSleepingModuleMiB: +((rssAfter - base) / n / 1048576).toFixed(2),
    stopAllMs: Math.round(stopAll),
  }),
);
cleanup();
