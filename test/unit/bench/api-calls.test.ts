import { describe, expect, it } from 'vitest';
import { parseRequestTotals, perPod } from '../../../bench/lib/api-calls.ts';

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
});
