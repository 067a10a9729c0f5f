// Experiment (not part of `npm run bench`): boots N workers through the WASI provider's pool
// (the built package, providers/wasi/dist: `npm run build` first), all taken at once, and prints per worker the RSS
// added and the process CPU; run it under `perf stat -e task-clock` for a figure that the other
// engineers' load on the machine does not move much, and with `--trace-gc` to count collections.
//   node bench/worker-boot.mjs [N=30] [resourceLimits JSON, default: the provider's] [maxBooting=4]
import { DEFAULT_RESOURCE_LIMITS, WorkerPool } from '@nodelet/provider-wasi';

const n = Number(process.argv[2] ?? 30);
const resourceLimits = process.argv[3] ? JSON.parse(process.argv[3]) : DEFAULT_RESOURCE_LIMITS;
const pool = new WorkerPool({ size: 0, maxBooting: Number(process.argv[4] ?? 4), resourceLimits });
const rss0 = process.memoryUsage.rss();
const cpu0 = process.cpuUsage();
const t0 = performance.now();
const workers = await Promise.all(Array.from({ length: n }, () => pool.take()));
const wallMs = performance.now() - t0;
const cpu = process.cpuUsage(cpu0);
await new Promise((r) => setTimeout(r, 500));
const rss = process.memoryUsage.rss();
console.log(
  JSON.stringify({
    node: process.version,
    resourceLimits,
    workers: n,
    wallMs: Math.round(wallMs),
    cpuMsPerWorker: Math.round((cpu.user + cpu.system) / 1000 / n),
    rssMiBPerWorker: Math.round(((rss - rss0) / 1048576 / n) * 100) / 100,
  }),
);
await Promise.all(workers.map((w) => w.terminate()));
await pool.close();
