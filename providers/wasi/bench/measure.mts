// Measures module start latency (cold compile vs cached) and RSS per sleeping module.
// Usage: npx tsx providers/wasi/bench/measure.mts [count] [limits-json|default|none]
import { WasiProvider, DEFAULT_RESOURCE_LIMITS } from '../src/index.ts';
import { FakeImages, podContext, providerContext, scratch, spec, pulledFixture } from '../test/helpers.ts';

const n = Number(process.argv[2] ?? 50);
const arg = process.argv[3] ?? 'default';
const resourceLimits = arg === 'default' ? DEFAULT_RESOURCE_LIMITS : arg === 'none' ? {} : JSON.parse(arg);
const p = new WasiProvider({ resourceLimits });
await p.init(providerContext(new FakeImages()));
const { dir, cleanup } = scratch();
const ctx = podContext();
const img = await pulledFixture('sleep');
const settle = () => new Promise((r) => setTimeout(r, 1500));

let t = performance.now();
const first = await p.startContainer(spec(img, dir, ['3600']), ctx);
const cold = performance.now() - t;
await first.stop(0);
t = performance.now();
const second = await p.startContainer(spec(img, dir, ['3600']), ctx);
const cached = performance.now() - t;
await second.stop(0);

(globalThis as { gc?: () => void }).gc?.();
await settle();
const base = process.memoryUsage().rss;
t = performance.now();
const running = [];
for (let i = 0; i < n; i++) running.push(await p.startContainer(spec(img, dir, ['3600']), ctx));
const startAll = performance.now() - t;
await settle();
const rss = process.memoryUsage().rss;
if (p.runningCount !== n) throw new Error(`only ${p.runningCount} of ${n} modules still run (worker limits too small?)`);
t = performance.now();
await p.shutdown();
const stopAll = performance.now() - t;
console.log(JSON.stringify({
  limits: resourceLimits, coldStartMs: +cold.toFixed(1), cachedStartMs: +cached.toFixed(1),
  n, startAllMs: Math.round(startAll), perModuleStartMs: +(startAll / n).toFixed(1),
  rssPerSleepingModuleMiB: +((rss - base) / n / 1048576).toFixed(2), stopAllMs: Math.round(stopAll),
}));
cleanup();
