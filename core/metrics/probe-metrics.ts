/**
 * `/metrics/probes` (upstream pkg/kubelet/prober `ProberResults`): the
 * cumulative number of probe checks by type and result, per container, in
 * its own registry (the kubelet serves it apart from `/metrics`).
 *
 * | name | type {labels} | meaning |
 * | --- | --- | --- |
 * | prober_probe_total | counter {probe_type, result, container, pod, namespace, pod_uid} | checks run; result is successful, failed or unknown |
 */
import { Counter, Registry } from './prom-client.ts';

const probeRegistry = new Registry();

/** One container's probe series' labels (without `probe_type` and `result`). */
export interface ProbeSeries {
  container: string;
  pod: string;
  namespace: string;
  pod_uid: string;
}

/** `prober_probe_total`. */
export const proberProbeTotal = new Counter({
  name: 'prober_probe_total',
  help: 'Cumulative number of a liveness, readiness or startup probe for a container by result.',
  labelNames: ['probe_type', 'result', 'container', 'pod', 'namespace', 'pod_uid'],
  registers: [probeRegistry],
});

/** Counts one check; `result` as nodelet's check results (a warning counts as successful, as upstream). */
export function countProbe(series: ProbeSeries, probeType: string, result: 'success' | 'warning' | 'failure' | 'unknown'): void {
  const r = result === 'failure' ? 'failed' : result === 'unknown' ? 'unknown' : 'successful';
  proberProbeTotal.inc({ ...series, probe_type: probeType, result: r });
}

/** Drops a container's series once its probes are gone. */
export function forgetProbeSeries(series: ProbeSeries, probeType: string): void {
  for (const result of ['successful', 'failed', 'unknown']) proberProbeTotal.remove({ ...series, probe_type: probeType, result });
}

/** The `/metrics/probes` text and its content type. */
export async function probeMetricsText(): Promise<{ text: string; contentType: string }> {
  return { text: await probeRegistry.metrics(), contentType: probeRegistry.contentType };
}
