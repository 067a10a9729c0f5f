/**
 * The parts of prom-client nodelet uses (`Registry`, `Counter`, `Gauge`, `Histogram` and
 * the default process/Node.js metrics), loaded from prom-client's lib/ files instead of
 * its index.js.
 *
 * Why: index.js also loads the Pushgateway client, the cluster aggregator and Summary,
 * and its default metrics load `@opentelemetry/api` (process_cpu_* read the active span
 * for exemplars, which nodelet does not enable): about 0.1 MB of source that would stay
 * in every node's heap. prom-client has no `exports` map, so its lib/ files are reachable
 * by path. {@link collectDefaultMetrics} is prom-client's (lib/defaultMetrics.js), the same
 * metrics in the same order, except that the three process_cpu_* counters are made here,
 * as prom-client makes them without exemplars. The types are prom-client's own.
 */
import { createRequire } from 'node:module';
import type * as Prom from 'prom-client';

const load = createRequire(import.meta.url);

export const Registry = load('prom-client/lib/registry.js') as typeof Prom.Registry;
export type Registry = Prom.Registry;
export const Counter = load('prom-client/lib/counter.js') as typeof Prom.Counter;
export type Counter<T extends string = string> = Prom.Counter<T>;
export const Gauge = load('prom-client/lib/gauge.js') as typeof Prom.Gauge;
export type Gauge<T extends string = string> = Prom.Gauge<T>;
export const Histogram = load('prom-client/lib/histogram.js') as typeof Prom.Histogram;
export type Histogram<T extends string = string> = Prom.Histogram<T>;

type DefaultMetric = (registry: Registry, config: { eventLoopMonitoringPrecision: number; register: Registry }) => void;

/** process_cpu_user_seconds_total, process_cpu_system_seconds_total, process_cpu_seconds_total (prom-client's lib/metrics/processCpuTotal.js without exemplars). */
function processCpuTotal(registry: Registry): void {
  const registers = [registry];
  let last = process.cpuUsage();
  const user = new Counter({
    name: 'process_cpu_user_seconds_total',
    help: 'Total user CPU time spent in seconds.',
    registers,
    // This one metric's `collect` sets all three.
    collect() {
      const now = process.cpuUsage();
      const userMicros = now.user - last.user;
      const systemMicros = now.system - last.system;
      last = now;
      user.inc(userMicros / 1e6);
      system.inc(systemMicros / 1e6);
      total.inc((userMicros + systemMicros) / 1e6);
    },
  });
  const system = new Counter({ name: 'process_cpu_system_seconds_total', help: 'Total system CPU time spent in seconds.', registers });
  const total = new Counter({ name: 'process_cpu_seconds_total', help: 'Total user and system CPU time spent in seconds.', registers });
}

/**
 * How often the event-loop delay monitor behind `nodejs_eventloop_lag_*` samples, in ms.
 * prom-client's default, 10 ms, is a timer waking the process 100 times a second: an idle
 * node's CPU was 0.0085 cores with it, 0.0015 at 100 ms (bench/README.md, "Idle memory").
 * Every stall of 100 ms or more still delays a sample, so it is still seen.
 */
export const EVENT_LOOP_SAMPLE_MS = 100;

/** prom-client's default metrics (its `collectDefaultMetrics({ register })`) on `registry`, the lag sampled every {@link EVENT_LOOP_SAMPLE_MS}. */
export function collectDefaultMetrics(registry: Registry): void {
  const metric = (name: string): DefaultMetric => load(`prom-client/lib/metrics/${name}.js`) as DefaultMetric;
  const config = { eventLoopMonitoringPrecision: EVENT_LOOP_SAMPLE_MS, register: registry };
  processCpuTotal(registry);
  for (const name of [
    'processStartTime',
    'osMemoryHeap',
    'processOpenFileDescriptors',
    'processMaxFileDescriptors',
    'eventLoopLag',
    ...(typeof process.getActiveResourcesInfo === 'function' ? ['processResources'] : []),
    'processHandles',
    'processRequests',
    'heapSizeAndUsed',
    'heapSpacesSizeAndUsed',
    'version',
    'gc',
  ]) {
    metric(name)(registry, config);
  }
}
