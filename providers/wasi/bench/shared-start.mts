// Start latency of BestEffort modules on shared threads: runner request → `started`
// (the provider's container-start channel), for the first start after the threads were booted,
// 30 starts one after another (50 ms apart), and 100 at once.
// Usage: npx tsx providers/wasi/bench/shared-start.mts [shared threads] [preboot: 1|0]
// (add --cpu-prof via NODE_OPTIONS to profile; each thread writes its own profile).
import { subscribe } from 'node:diagnostics_channel';
import { CONTAINER_START_CHANNEL, WasiProvider, type ContainerStartEvent } from '../src/index.ts';
import { FakeImages, podContext, providerContext, pulledFixture, scratch, spec } from '../test/helpers.ts';

const threads = Number(process.argv[2] ?? 2);
const preboot = process.argv[3] !== '0';
const starts = new Map<string, ContainerStartEvent>();
subscribe(CONTAINER_START_CHANNEL, (e) => starts.set((e as ContainerStartEvent).containerId, e as ContainerStartEvent));
const p = new WasiProvider({ sharedThreads: threads });
await p.init(providerContext(new FakeImages()));
const { dir, cleanup } = scratch();
const img = await pulledFixture('sleep');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
if (preboot) p.warm();
await sleep(2000);
const q = (xs: number[], f: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(f * xs.length))]!;
const r2 = (v: number) => +v.toFixed(2);
const start = async () => {
  const s = { ...spec(img, dir, ['3600']), qosClass: 'BestEffort' as const };
  const c = await p.startContainer(s, podContext());
  return { c, ms: starts.get(s.id)!.startMs };
};
const first = await start();
const seq: number[] = [];
const running = [first.c];
for (let i = 0; i < 30; i++) {
  await sleep(50);
  const s = await start();
  seq.push(s.ms);
  running.push(s.c);
}
await sleep(500);
const burst = await Promise.all(Array.from({ length: 100 }, () => start()));
running.push(...burst.map((b) => b.c));
const bms = burst.map((b) => b.ms);
await Promise.all(running.map((c) => c.stop(0)));
await p.shutdown();
cleanup();
console.log(
  JSON.stringify({
    threads,
    preboot,
    firstMs: r2(first.ms),
    sequentialMs: { p50: r2(q(seq, 0.5)), p90: r2(q(seq, 0.9)), max: r2(Math.max(...seq)) },
    burst100Ms: { first: r2(Math.min(...bms)), p50: r2(q(bms, 0.5)), last: r2(Math.max(...bms)) },
    load: (await import('node:fs')).readFileSync('/proc/loadavg', 'utf8').trim(),
  }),
);
