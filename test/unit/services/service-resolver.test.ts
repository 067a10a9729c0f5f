/**
 * The node's Service resolver, address side: a Service's virtual address and port to one of its
 * endpoints as kube-proxy picks it (readiness, ports by name, ClientIP affinity, Local policy,
 * topology hints), and the answers for addresses that are no Service's.
 */
import { describe, expect, it } from 'vitest';
import { isInvalidArgument } from '@nodelet/plugin-api/v1';
import { ep, NODE, service, setup, slice, svcPort } from './fixtures.ts';

const VIP = '10.0.0.10';

describe('resolve: a ClusterIP and port to an endpoint', () => {
  it('translates ClusterIP:port to a ready endpoint at the slice port; other addresses and ports are direct', () => {
    const { table, resolver } = setup();
    table.upsertService(service('ns', 'web', { clusterIP: VIP, clusterIPs: [VIP], ports: [svcPort(80, undefined, 'TCP', 8080)] }));
    table.upsertSlice(slice('ns', 'web', 'web-1', [ep('10.244.1.5')]));
    expect(resolver.resolve(VIP, 80)).toEqual({ kind: 'endpoint', address: '10.244.1.5', port: 8080, service: { namespace: 'ns', name: 'web', port: '' } });
    expect(resolver.resolve(VIP, 81)).toEqual({ kind: 'direct' });
    expect(resolver.resolve(VIP, 80, 'UDP')).toEqual({ kind: 'direct' });
    expect(resolver.resolve('10.244.1.5', 8080)).toEqual({ kind: 'direct' });
  });

  it('skips endpoints whose ready condition is false; an unset condition counts as ready', () => {
    const { table, resolver } = setup({ random: [0.99, 0.99] });
    table.upsertService(service('ns', 'web', { clusterIP: VIP }));
    table.upsertSlice(slice('ns', 'web', 'web-1', [ep('10.244.1.5', { ready: false }), { addresses: ['10.244.1.6'], conditions: {} }]));
    expect(resolver.resolve(VIP, 80)).toMatchObject({ kind: 'endpoint', address: '10.244.1.6' });
  });

  it('answers refused, naming the Service, when no endpoint is ready; an endpoint turning ready applies to the next question', () => {
    const { table, resolver } = setup();
    table.upsertService(service('ns', 'web', { clusterIP: VIP }));
    expect(resolver.resolve(VIP, 80)).toEqual({
      kind: 'refused',
      service: { namespace: 'ns', name: 'web', port: '' },
      message: 'Service ns/web port 80/TCP has no ready endpoints',
    });
    table.upsertSlice(slice('ns', 'web', 'web-1', [ep('10.244.1.5', { ready: false })]));
    expect(resolver.resolve(VIP, 80).kind).toBe('refused');
    table.upsertSlice(slice('ns', 'web', 'web-1', [ep('10.244.1.5')]));
    expect(resolver.resolve(VIP, 80)).toMatchObject({ kind: 'endpoint', address: '10.244.1.5' });
    table.removeSlice(slice('ns', 'web', 'web-1', []));
    expect(resolver.resolve(VIP, 80).kind).toBe('refused');
  });

  it('falls back to serving terminating endpoints when none is ready, as kube-proxy does', () => {
    const { table, resolver } = setup();
    table.upsertService(service('ns', 'web', { clusterIP: VIP }));
    table.upsertSlice(
      slice('ns', 'web', 'web-1', [
        ep('10.244.1.5', { ready: false, serving: true, terminating: true }),
        ep('10.244.1.6', { ready: false, serving: false, terminating: true }),
      ]),
    );
    expect(resolver.resolve(VIP, 80)).toMatchObject({ kind: 'endpoint', address: '10.244.1.5' });
  });

  it('maps each Service port to the slice port of the same name (a named targetPort resolves per pod)', () => {
    const { table, resolver } = setup({ random: [0, 0.99, 0, 0.99] });
    table.upsertService(service('ns', 'web', { clusterIP: VIP, ports: [svcPort(80, 'http', 'TCP', 'web'), svcPort(9090, 'metrics', 'TCP', 'metrics')] }));
    // Two slices: the pods of each name their container ports differently.
    table.upsertSlice(
      slice(
        'ns',
        'web',
        'web-a',
        [ep('10.244.1.5')],
        [
          { name: 'http', port: 8080 },
          { name: 'metrics', port: 9100 },
        ],
      ),
    );
    table.upsertSlice(
      slice(
        'ns',
        'web',
        'web-b',
        [ep('10.244.1.7')],
        [
          { name: 'http', port: 8081 },
          { name: 'metrics', port: 9101 },
        ],
      ),
    );
    const answer = (port: number) => {
      const t = resolver.resolve(VIP, port);
      return t.kind === 'endpoint' ? `${t.address}:${t.port} ${t.service.port}` : t.kind;
    };
    expect([answer(80), answer(80), answer(9090), answer(9090)]).toEqual([
      '10.244.1.5:8080 http',
      '10.244.1.7:8081 http',
      '10.244.1.5:9100 metrics',
      '10.244.1.7:9101 metrics',
    ]);
  });

  it('uses the endpoints of the address family of the ClusterIP it was asked for (dual-stack)', () => {
    const { table, resolver } = setup();
    table.upsertService(service('ns', 'web', { clusterIP: VIP, clusterIPs: [VIP, 'fd00::a'] }));
    table.upsertSlice(slice('ns', 'web', 'web-4', [ep('10.244.1.5')]));
    table.upsertSlice(slice('ns', 'web', 'web-6', [ep('fd00:244::5')], undefined, 'IPv6'));
    expect(resolver.resolve(VIP, 80)).toMatchObject({ address: '10.244.1.5' });
    expect(resolver.resolve('[fd00:0:0::a]', 80)).toMatchObject({ address: 'fd00:244::5' });
  });

  it('routes external and load-balancer IPs to the cluster endpoints', () => {
    const { table, resolver } = setup();
    table.upsertService(
      service('ns', 'web', { type: 'LoadBalancer', clusterIP: VIP, externalIPs: ['192.0.2.7'] }, { loadBalancer: { ingress: [{ ip: '198.51.100.9' }] } }),
    );
    table.upsertSlice(slice('ns', 'web', 'web-1', [ep('10.244.1.5')]));
    expect(resolver.resolve('192.0.2.7', 80)).toMatchObject({ kind: 'endpoint', address: '10.244.1.5' });
    expect(resolver.resolve('198.51.100.9', 80)).toMatchObject({ kind: 'endpoint', address: '10.244.1.5' });
  });

  it('forgets the virtual IPs of a deleted or changed Service', () => {
    const { table, resolver } = setup();
    table.upsertService(service('ns', 'web', { clusterIP: VIP }));
    table.upsertService(service('ns', 'web', { clusterIP: VIP, ports: [svcPort(81)] }));
    expect(resolver.resolve(VIP, 80)).toEqual({ kind: 'direct' });
    table.removeService(service('ns', 'web'));
    expect(resolver.resolve(VIP, 81)).toEqual({ kind: 'direct' });
  });

  it('answers unavailable, with the reason, while EndpointSlices could not be listed', () => {
    const { table, resolver } = setup();
    table.slicesSynced = false;
    table.slicesProblem = 'Services or EndpointSlices cannot be listed or watched: EndpointSlices: forbidden';
    table.upsertService(service('ns', 'web', { clusterIP: VIP }));
    expect(resolver.resolve(VIP, 80)).toEqual({
      kind: 'unavailable',
      service: { namespace: 'ns', name: 'web', port: '' },
      message: 'the endpoints of Service ns/web are not known: Services or EndpointSlices cannot be listed or watched: EndpointSlices: forbidden',
    });
  });

  it('refuses bad arguments with branded InvalidArgument errors', () => {
    const { resolver } = setup();
    for (const call of [
      () => resolver.resolve(VIP, 0),
      () => resolver.resolve(VIP, 70000),
      () => resolver.resolve('web', 80),
      () => resolver.resolve(VIP, 80, 'ICMP' as 'TCP'),
    ]) {
      let err: unknown;
      try {
        call();
      } catch (e) {
        err = e;
      }
      expect(isInvalidArgument(err), String(err)).toBe(true);
    }
  });
});

describe('resolve: sessionAffinity ClientIP', () => {
  const endpoints = [ep('10.244.1.5'), ep('10.244.1.6'), ep('10.244.1.7')];

  it('gives a client the same endpoint while it keeps connecting within the timeout, and another one after', () => {
    let now = 0;
    const { table, resolver } = setup({ now: () => now, random: [0, 0.5, 0.99, 0.99] });
    table.upsertService(service('ns', 'web', { clusterIP: VIP, sessionAffinity: 'ClientIP', sessionAffinityConfig: { clientIP: { timeoutSeconds: 60 } } }));
    table.upsertSlice(slice('ns', 'web', 'web-1', endpoints));
    const first = resolver.resolve(VIP, 80, 'TCP', '10.244.1.20');
    expect(first).toMatchObject({ address: '10.244.1.5' });
    // A second client draws its own endpoint.
    expect(resolver.resolve(VIP, 80, 'TCP', '10.244.1.21')).toMatchObject({ address: '10.244.1.6' });
    for (let i = 0; i < 5; i++) {
      now += 50_000; // each connection within 60 s of the last one
      expect(resolver.resolve(VIP, 80, 'TCP', '10.244.1.20')).toMatchObject({ address: '10.244.1.5' });
    }
    now += 60_001; // idle past the timeout: a fresh choice
    expect(resolver.resolve(VIP, 80, 'TCP', '10.244.1.20')).toMatchObject({ address: '10.244.1.7' });
  });

  it('defaults to 10800 s, and moves a client whose endpoint stopped being ready', () => {
    let now = 0;
    const { table, resolver } = setup({ now: () => now, random: [0, 0.99] });
    table.upsertService(service('ns', 'web', { clusterIP: VIP, sessionAffinity: 'ClientIP' }));
    table.upsertSlice(slice('ns', 'web', 'web-1', endpoints));
    expect(resolver.resolve(VIP, 80, 'TCP', '10.244.1.20')).toMatchObject({ address: '10.244.1.5' });
    now += 10_799_000;
    expect(resolver.resolve(VIP, 80, 'TCP', '10.244.1.20')).toMatchObject({ address: '10.244.1.5' });
    table.upsertSlice(slice('ns', 'web', 'web-1', [ep('10.244.1.5', { ready: false }), ...endpoints.slice(1)]));
    expect(resolver.resolve(VIP, 80, 'TCP', '10.244.1.20')).toMatchObject({ address: '10.244.1.7' });
  });

  it('without affinity, or without a client address, each connection is drawn afresh', () => {
    const { table, resolver } = setup({ random: [0, 0.99, 0, 0.99] });
    table.upsertService(service('ns', 'web', { clusterIP: VIP }));
    table.upsertSlice(slice('ns', 'web', 'web-1', endpoints));
    expect([1, 2].map(() => (resolver.resolve(VIP, 80, 'TCP', '10.244.1.20') as { address: string }).address)).toEqual(['10.244.1.5', '10.244.1.7']);
    table.upsertService(service('ns', 'web', { clusterIP: VIP, sessionAffinity: 'ClientIP' }));
    expect([1, 2].map(() => (resolver.resolve(VIP, 80) as { address: string }).address)).toEqual(['10.244.1.5', '10.244.1.7']);
  });
});

describe('resolve: internalTrafficPolicy Local and topology hints', () => {
  it("Local: only this node's endpoints; none here → refused, saying so", () => {
    const { table, resolver } = setup({ random: [0.99] });
    table.upsertService(service('ns', 'web', { clusterIP: VIP, internalTrafficPolicy: 'Local', externalIPs: ['192.0.2.7'] }));
    table.upsertSlice(slice('ns', 'web', 'web-1', [ep('10.244.1.5'), ep('10.244.2.5', { nodeName: 'n2' }), ep('10.244.3.5', { nodeName: 'n3' })]));
    for (let i = 0; i < 3; i++) expect(resolver.resolve(VIP, 80)).toMatchObject({ address: '10.244.1.5' });
    table.upsertSlice(slice('ns', 'web', 'web-1', [ep('10.244.2.5', { nodeName: 'n2' })]));
    expect(resolver.resolve(VIP, 80)).toMatchObject({
      kind: 'refused',
      message: 'Service ns/web port 80/TCP has no ready endpoint on this node (internalTrafficPolicy: Local)',
    });
    // External IPs go to the cluster endpoints whatever the internal policy.
    expect(resolver.resolve('192.0.2.7', 80)).toMatchObject({ kind: 'endpoint', address: '10.244.2.5' });
  });

  it("zone hints: only the endpoints hinted for this node's zone while every ready endpoint has hints", () => {
    const { table, resolver } = setup({ zone: 'zone-a', random: [0, 0.99, 0, 0.99, 0.99] });
    table.upsertService(service('ns', 'web', { clusterIP: VIP, trafficDistribution: 'PreferClose' }));
    const a1 = ep('10.244.1.5', { zones: ['zone-a'] });
    const a2 = ep('10.244.2.5', { nodeName: 'n2', zones: ['zone-a'] });
    const b = ep('10.244.3.5', { nodeName: 'n3', zones: ['zone-b'] });
    table.upsertSlice(slice('ns', 'web', 'web-1', [b, a1, a2]));
    expect([1, 2].map(() => (resolver.resolve(VIP, 80) as { address: string }).address)).toEqual(['10.244.1.5', '10.244.2.5']);
    // One ready endpoint without hints: hints are ignored, all endpoints take connections.
    table.upsertSlice(slice('ns', 'web', 'web-1', [b, a1, ep('10.244.2.5', { nodeName: 'n2' })]));
    expect([1, 2].map(() => (resolver.resolve(VIP, 80) as { address: string }).address)).toEqual(['10.244.3.5', '10.244.2.5']);
    // No endpoint for this zone: all of them.
    table.upsertSlice(slice('ns', 'web', 'web-1', [b]));
    expect(resolver.resolve(VIP, 80)).toMatchObject({ address: '10.244.3.5' });
  });

  it('node hints (PreferSameNode) win over zone hints when every ready endpoint has them', () => {
    const { table, resolver } = setup({ zone: 'zone-a', random: [0.99, 0.99] });
    table.upsertService(service('ns', 'web', { clusterIP: VIP, trafficDistribution: 'PreferSameNode' }));
    table.upsertSlice(
      slice('ns', 'web', 'web-1', [
        ep('10.244.1.5', { zones: ['zone-a'], nodes: [NODE] }),
        ep('10.244.2.5', { nodeName: 'n2', zones: ['zone-a'], nodes: ['n2'] }),
      ]),
    );
    expect(resolver.resolve(VIP, 80)).toMatchObject({ address: '10.244.1.5' });
    expect(resolver.resolve(VIP, 80)).toMatchObject({ address: '10.244.1.5' });
  });
});
