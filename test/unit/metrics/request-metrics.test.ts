/**
 * The per-container request metrics of `/metrics` (core/metrics/request-metrics.ts): every family
 * with HELP/TYPE, cAdvisor's labels, codes as labels, a cumulative histogram with +Inf, and
 * nothing at all when no container serves requests itself.
 */
import { describe, expect, it } from 'vitest';
import { requestMetricsText } from '../../../core/metrics/request-metrics.ts';

describe('requestMetricsText', () => {
  const c = {
    pod: { namespace: 'ns', name: 'web-"1"', uid: 'u' },
    container: 'main',
    requestsByCode: [
      [200, 7],
      [500, 1],
    ] as const,
    duration: {
      buckets: [
        [0.01, 6],
        [1, 8],
        [Infinity, 8],
      ] as const,
      sum: 0.25,
      count: 8,
    },
    inFlight: 2,
    instances: 3,
    traps: 1,
    timeouts: 0,
    overloaded: 4,
  };

  it('renders each family with the container labels', () => {
    const text = requestMetricsText([c]);
    const labels = 'namespace="ns",pod="web-\\"1\\"",container="main"';
    expect(text).toContain('# TYPE nodelet_container_http_requests_total counter');
    expect(text).toContain(`nodelet_container_http_requests_total{${labels},code="200"} 7`);
    expect(text).toContain(`nodelet_container_http_requests_total{${labels},code="500"} 1`);
    expect(text).toContain('# TYPE nodelet_container_http_request_duration_seconds histogram');
    expect(text).toContain(`nodelet_container_http_request_duration_seconds_bucket{${labels},le="0.01"} 6`);
    expect(text).toContain(`nodelet_container_http_request_duration_seconds_bucket{${labels},le="+Inf"} 8`);
    expect(text).toContain(`nodelet_container_http_request_duration_seconds_count{${labels}} 8`);
    expect(text).toContain(`nodelet_container_http_requests_in_flight{${labels}} 2`);
    expect(text).toContain(`nodelet_container_http_instances{${labels}} 3`);
    expect(text).toContain(`nodelet_container_http_traps_total{${labels}} 1`);
    expect(text).toContain(`nodelet_container_http_overloaded_total{${labels}} 4`);
    expect(text.endsWith('\n')).toBe(true);
  });

  it('is empty without containers', () => {
    expect(requestMetricsText([])).toBe('');
  });
});
