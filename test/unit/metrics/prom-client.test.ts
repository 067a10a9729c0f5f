/**
 * core/metrics/prom-client.ts loads prom-client's lib/ files rather than its index.js: its default
 * metrics are prom-client's own (names, types, help, order), and process_cpu_* count this process's CPU.
 */
import { createRequire } from 'node:module';
import type * as Prom from 'prom-client';
import perfHooks from 'node:perf_hooks';
import { describe, expect, it, vi } from 'vitest';
import { EVENT_LOOP_SAMPLE_MS, Registry, collectDefaultMetrics } from '../../../core/metrics/prom-client.ts';

const upstream = createRequire(import.meta.url)('prom-client') as typeof Prom;

describe('prom-client from its lib/ files', () => {
  it("registers prom-client's default metrics, in its order", async () => {
    const theirs = new upstream.Registry();
    upstream.collectDefaultMetrics({ register: theirs });
    const ours = new Registry();
    collectDefaultMetrics(ours);
    const shape = async (r: Prom.Registry) => (await r.getMetricsAsJSON()).map((m) => `${m.name} ${m.type} ${m.help}`);
    const want = await shape(theirs);
    expect(want.length).toBeGreaterThan(10);
    expect(await shape(ours)).toEqual(want);
  });

  it('counts CPU time in process_cpu_seconds_total as user plus system', async () => {
    const r = new Registry();
    collectDefaultMetrics(r);
    await r.metrics(); // the first collection sets the counters from the time of their creation
    const until = Date.now() + 30;
    while (Date.now() < until); // some CPU time
    const json = await r.getMetricsAsJSON();
    const value = (name: string) => json.find((m) => m.name === name)!.values[0]!.value;
    expect(value('process_cpu_seconds_total')).toBeGreaterThan(0);
    expect(value('process_cpu_seconds_total')).toBeCloseTo(value('process_cpu_user_seconds_total') + value('process_cpu_system_seconds_total'), 9);
  });

  it("samples the event-loop delay every 100 ms, not at prom-client's 10 ms (a timer waking an idle node 100 times a second)", () => {
    const monitor = vi.spyOn(perfHooks, 'monitorEventLoopDelay');
    try {
      collectDefaultMetrics(new Registry());
      expect(EVENT_LOOP_SAMPLE_MS).toBe(100);
      expect(monitor).toHaveBeenCalledWith({ resolution: EVENT_LOOP_SAMPLE_MS });
    } finally {
      monitor.mockRestore();
    }
  });
});
