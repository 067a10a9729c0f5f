import { describe, expect, it } from 'vitest';
import { parseRequestTotals, parseServerTimes, perPod, serverMsPerCall } from '../../../bench/lib/api-calls.ts';

const metrics = (token201: number, token403: number, status200: number) =>
  [
    '# HELP apiserver_request_total [STABLE] Counter of apiserver requests',
    `apiserver_request_total{code="201",component="apiserver",dry_run="",group="",resource="serviceaccounts",scope="resource",subresource="token",verb="POST",version="v1"} ${token201}`,
    `apiserver_request_total{code="403",component="apiserver",dry_run="",group="",resource="serviceaccounts",scope="resource",subresource="token",verb="POST",version="v1"} ${token403}`,
    `apiserver_request_total{code="200",component="apiserver",dry_run="",group="",resource="pods",scope="resource",subresource="status",verb="PATCH",version="v1"} ${status200}`,
    `apiserver_request_total{code="404",component="apiserver",dry_run="",group="apps",resource="deployments",scope="resource",subresource="",verb="GET",version="v1"} 7`,
  ].join('\n');

describe('API calls per pod from apiserver_request_total', () => {
  it('counts every call under its verb and resource, and refused ones also under their code', () => {
    expect(parseRequestTotals(metrics(10, 2, 5))).toEqual({
      'POST /serviceaccounts/token': 12,
      'POST /serviceaccounts/token 403': 2,
      'PATCH /pods/status': 5,
      'GET apps/deployments': 7,
      'GET apps/deployments 404': 7,
    });
  });

  it("reports the kubelet side per pod and the kubelet side's refused calls as counts", () => {
    const a = perPod(parseRequestTotals(metrics(10, 2, 5)), parseRequestTotals(metrics(110, 6, 205)), 100);
    expect(a.nodeSide).toEqual({ 'PATCH /pods/status': 2, 'POST /serviceaccounts/token': 1.04 });
    expect(a.nodeSideTotal).toBe(3.04);
    expect(a.refused).toEqual({ 'POST /serviceaccounts/token 403': 4 });
  });

  it("gives the apiserver's mean time per kubelet-side call between two scrapes, without WATCH and other callers' series", () => {
    const durations = (tokenS: number, tokens: number, statusS: number, statuses: number) =>
      [
        '# HELP apiserver_request_duration_seconds [STABLE] Response latency distribution in seconds',
        `apiserver_request_duration_seconds_bucket{component="apiserver",dry_run="",group="",resource="serviceaccounts",scope="resource",subresource="token",verb="POST",version="v1",le="0.005"} 1`,
        `apiserver_request_duration_seconds_sum{component="apiserver",dry_run="",group="",resource="serviceaccounts",scope="resource",subresource="token",verb="POST",version="v1"} ${tokenS}`,
        `apiserver_request_duration_seconds_count{component="apiserver",dry_run="",group="",resource="serviceaccounts",scope="resource",subresource="token",verb="POST",version="v1"} ${tokens}`,
        `apiserver_request_duration_seconds_sum{component="apiserver",dry_run="",group="",resource="pods",scope="resource",subresource="status",verb="PATCH",version="v1"} ${statusS}`,
        `apiserver_request_duration_seconds_count{component="apiserver",dry_run="",group="",resource="pods",scope="resource",subresource="status",verb="PATCH",version="v1"} ${statuses}`,
        `apiserver_request_duration_seconds_sum{component="apiserver",dry_run="",group="",resource="pods",scope="namespace",subresource="",verb="WATCH",version="v1"} 1000`,
        `apiserver_request_duration_seconds_count{component="apiserver",dry_run="",group="",resource="pods",scope="namespace",subresource="",verb="WATCH",version="v1"} 3`,
        `apiserver_request_duration_seconds_sum{component="apiserver",dry_run="",group="",resource="pods",scope="resource",subresource="binding",verb="POST",version="v1"} 9`,
        `apiserver_request_duration_seconds_count{component="apiserver",dry_run="",group="",resource="pods",scope="resource",subresource="binding",verb="POST",version="v1"} 90`,
      ].join('\n');
    const before = parseServerTimes(durations(1, 10, 0.5, 10));
    expect(before.calls).toEqual({ 'POST /serviceaccounts/token': 10, 'PATCH /pods/status': 10, 'POST /pods/binding': 90 });
    expect(before.seconds['PATCH /pods/status']).toBe(0.5);
    // 100 more tokens in 4.2 s, 100 more status patches in 8.5 s; no binding moved (and bindings are not the kubelet's).
    expect(serverMsPerCall(before, parseServerTimes(durations(5.2, 110, 9, 110)))).toEqual({
      'POST /serviceaccounts/token': 42,
      'PATCH /pods/status': 85,
    });
  });
});
