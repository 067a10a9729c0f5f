/**
 * The kubelet API's observability endpoints (authorized like every path:
 * `/metrics*` → nodes/metrics, `/stats*` → nodes/stats, `/configz` → nodes/configz):
 *
 * - `GET /metrics`: nodelet's Prometheus metrics (core/metrics/kubelet-metrics.ts);
 * - `GET /metrics/resource`: upstream's resource metrics (what metrics-server reads);
 * - `GET /metrics/probes`: `prober_probe_total` (core/metrics/probe-metrics.ts);
 * - `GET /stats/summary`: upstream's Summary JSON (`only_cpu_and_memory` is accepted;
 *   nodelet reports only CPU and memory anyway);
 * - `GET /configz`: `{"kubeletconfig": {...}}`, the configuration in effect.
 */
import type { FastifyInstance } from 'fastify';
import { type StatsSnapshot, probeMetricsText, renderResourceMetrics, RESOURCE_METRICS_CONTENT_TYPE, summaryOf } from '../metrics/index.ts';

/** Where the endpoints read from. */
export interface StatsRoutesOptions {
  /** Takes a usage snapshot of the node and its containers. */
  snapshot(): Promise<StatsSnapshot>;
  /** The `/metrics` text. */
  metrics(): Promise<{ text: string; contentType: string }>;
  /** The KubeletConfiguration in effect (served under `kubeletconfig`). */
  configz(): Record<string, unknown>;
}

/** Registers the routes on the HTTPS app. */
export function registerStatsRoutes(app: FastifyInstance, o: StatsRoutesOptions): void {
  app.get('/metrics', async (_req, reply) => {
    const m = await o.metrics();
    return reply.type(m.contentType).send(m.text);
  });
  app.get('/metrics/resource', async (_req, reply) => reply.type(RESOURCE_METRICS_CONTENT_TYPE).send(renderResourceMetrics(await o.snapshot())));
  app.get('/metrics/probes', async (_req, reply) => {
    const m = await probeMetricsText();
    return reply.type(m.contentType).send(m.text);
  });
  app.get('/stats/summary', async (_req, reply) => reply.type('application/json').send(JSON.stringify(summaryOf(await o.snapshot()))));
  app.get('/configz', async (_req, reply) => reply.type('application/json').send(JSON.stringify({ kubeletconfig: o.configz() })));
}
