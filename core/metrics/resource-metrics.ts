/**
 * `/metrics/resource` as upstream's `pkg/kubelet/metrics/collectors/resource_metrics.go`
 * writes it: Prometheus text with an explicit timestamp (ms) on each sample,
 * the series metrics-server v0.9 reads (node/pod/container CPU in
 * core-seconds, memory working set in bytes, container start time) and the
 * two error gauges. Written by hand because prom-client cannot attach
 * per-sample timestamps; the format is the text exposition format 0.0.4.
 */
import type { StatsSnapshot } from './stats-types.ts';

/** The content type of the text exposition format. */
export const RESOURCE_METRICS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

const escapeLabel = (v: string): string => v.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"');

function labels(l: Record<string, string>): string {
  const parts = Object.keys(l)
    .sort()
    .map((k) => `${k}="${escapeLabel(l[k]!)}"`);
  return parts.length ? `{${parts.join(',')}}` : '';
}

const num = (v: number): string =>
  Number.isInteger(v)
    ? String(v)
    : v
        .toPrecision(17)
        .replace(/\.?0+$/, '')
        .replace(/\.?0+e/, 'e');

interface Family {
  name: string;
  help: string;
  type: 'counter' | 'gauge';
  samples: string[];
}

/** Renders a snapshot as upstream's resource metrics. */
export function renderResourceMetrics(s: StatsSnapshot): string {
  const fam = (name: string, type: Family['type'], help: string): Family => ({ name, type, help, samples: [] });
  const cCpu = fam('container_cpu_usage_seconds_total', 'counter', '[STABLE] Cumulative cpu time consumed by the container in core-seconds');
  const cMem = fam('container_memory_working_set_bytes', 'gauge', '[STABLE] Current working set of the container in bytes');
  const cStart = fam('container_start_time_seconds', 'gauge', '[STABLE] Start time of the container since unix epoch in seconds');
  const nCpu = fam('node_cpu_usage_seconds_total', 'counter', '[STABLE] Cumulative cpu time consumed by the node in core-seconds');
  const nMem = fam('node_memory_working_set_bytes', 'gauge', '[STABLE] Current working set of the node in bytes');
  const pCpu = fam('pod_cpu_usage_seconds_total', 'counter', '[STABLE] Cumulative cpu time consumed by the pod in core-seconds');
  const pMem = fam('pod_memory_working_set_bytes', 'gauge', '[STABLE] Current working set of the pod in bytes');
  const rErr = fam('resource_scrape_error', 'gauge', '[STABLE] 1 if there was an error while getting container metrics, 0 otherwise');
  const sErr = fam('scrape_error', 'gauge', '[ALPHA] 1 if there was an error while getting container metrics, 0 otherwise');
  const add = (f: Family, l: Record<string, string>, v: number, at?: Date) => f.samples.push(`${f.name}${labels(l)} ${num(v)}${at ? ` ${at.getTime()}` : ''}`);

  add(nCpu, {}, s.node.cpuNs / 1e9, s.node.timestamp);
  add(nMem, {}, s.node.workingSetBytes, s.node.timestamp);
  for (const p of s.pods) {
    const pl = { namespace: p.namespace, pod: p.name };
    let cpu = 0;
    let mem = 0;
    let cpuKnown = false;
    let memKnown = false;
    let at: Date | undefined;
    for (const c of p.containers) {
      const cl = { ...pl, container: c.name };
      add(cStart, cl, c.startTime.getTime() / 1000, c.timestamp);
      if (c.cpuNs !== undefined) {
        add(cCpu, cl, c.cpuNs / 1e9, c.timestamp);
        cpu += c.cpuNs;
        cpuKnown = true;
      }
      if (c.workingSetBytes !== undefined) {
        add(cMem, cl, c.workingSetBytes, c.timestamp);
        mem += c.workingSetBytes;
        memKnown = true;
      }
      if (!at || c.timestamp > at) at = c.timestamp;
    }
    if (cpuKnown) add(pCpu, pl, cpu / 1e9, at);
    if (memKnown) add(pMem, pl, mem, at);
  }
  add(rErr, {}, s.scrapeError ? 1 : 0);
  add(sErr, {}, s.scrapeError ? 1 : 0);
  return (
    [cCpu, cMem, cStart, nCpu, nMem, pCpu, pMem, rErr, sErr]
      .map((f) => [`# HELP ${f.name} ${f.help}`, `# TYPE ${f.name} ${f.type}`, ...f.samples].join('\n'))
      .join('\n') + '\n'
  );
}
