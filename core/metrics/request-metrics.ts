/**
 * The request metrics of containers that serve requests themselves (providers'
 * `requestMetrics()`, e.g. wasi:http components served with an instance per request), in the
 * Prometheus text format, labelled as cAdvisor labels container metrics (`namespace`, `pod`,
 * `container`). The provider keeps the counts; they are rendered as they are at scrape time, so
 * they are written here rather than through prom-client's own counters.
 *
 * | name | type | meaning |
 * | --- | --- | --- |
 * | nodelet_container_http_requests_total | counter {code} | requests answered, by status code |
 * | nodelet_container_http_request_duration_seconds | histogram | time from the request's arrival to its end |
 * | nodelet_container_http_requests_in_flight | gauge | requests being served |
 * | nodelet_container_http_instances | gauge | instances alive (busy and ready) |
 * | nodelet_container_http_traps_total | counter | requests that ended in a trap (answered 500) |
 * | nodelet_container_http_request_timeouts_total | counter | requests ended by their timeout |
 * | nodelet_container_http_overloaded_total | counter | requests refused with 503, every instance busy |
 */
import type { ContainerRequestMetrics } from '@nodelet/plugin-api/v1';

const esc = (v: string) => v.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"');
const labels = (c: ContainerRequestMetrics, extra = '') =>
  `{namespace="${esc(c.pod.namespace)}",pod="${esc(c.pod.name)}",container="${esc(c.container)}"${extra}}`;
const le = (bound: number) => (bound === Infinity ? '+Inf' : String(bound));

/** The text of every container's request metrics (empty when there are none). */
export function requestMetricsText(containers: readonly ContainerRequestMetrics[]): string {
  if (containers.length === 0) return '';
  const lines: string[] = [];
  const family = (name: string, type: string, help: string, each: (c: ContainerRequestMetrics) => string[]) => {
    lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`);
    for (const c of containers) lines.push(...each(c));
  };
  family('nodelet_container_http_requests_total', 'counter', 'HTTP requests a container answered, by status code', (c) =>
    c.requestsByCode.map(([code, n]) => `nodelet_container_http_requests_total${labels(c, `,code="${code}"`)} ${n}`),
  );
  family('nodelet_container_http_request_duration_seconds', 'histogram', "Time from an HTTP request's arrival to its end", (c) => [
    ...c.duration.buckets.map(([bound, n]) => `nodelet_container_http_request_duration_seconds_bucket${labels(c, `,le="${le(bound)}"`)} ${n}`),
    `nodelet_container_http_request_duration_seconds_sum${labels(c)} ${c.duration.sum}`,
    `nodelet_container_http_request_duration_seconds_count${labels(c)} ${c.duration.count}`,
  ]);
  family('nodelet_container_http_requests_in_flight', 'gauge', 'HTTP requests a container is serving now', (c) => [
    `nodelet_container_http_requests_in_flight${labels(c)} ${c.inFlight}`,
  ]);
  family('nodelet_container_http_instances', 'gauge', 'Instances a container keeps to serve requests (busy and ready)', (c) => [
    `nodelet_container_http_instances${labels(c)} ${c.instances}`,
  ]);
  family('nodelet_container_http_traps_total', 'counter', 'HTTP requests that ended in a trap of the workload (answered 500)', (c) => [
    `nodelet_container_http_traps_total${labels(c)} ${c.traps}`,
  ]);
  family('nodelet_container_http_request_timeouts_total', 'counter', 'HTTP requests ended by their timeout', (c) => [
    `nodelet_container_http_request_timeouts_total${labels(c)} ${c.timeouts}`,
  ]);
  family('nodelet_container_http_overloaded_total', 'counter', 'HTTP requests refused with 503 because every instance was busy', (c) => [
    `nodelet_container_http_overloaded_total${labels(c)} ${c.overloaded}`,
  ]);
  return `${lines.join('\n')}\n`;
}
