/**
 * The node's Service resolver, name side: the search path per dnsPolicy (as upstream's
 * pkg/kubelet/network/dns/dns.go writes resolv.conf), Service and headless names, ExternalName
 * aliases, and route() combining the lookup with the address translation.
 */
import { describe, expect, it } from 'vitest';
import { candidateNames, podDns, searchPath } from '../../../core/services/dns-search.ts';
import { ep, pod, service, setup, slice } from './fixtures.ts';

const VIP = '10.0.0.10';

/** A table with Service ns/web (ClusterIP, one ready endpoint) and friends. */
function cluster(o: Parameters<typeof setup>[0] = {}) {
  const s = setup(o);
  s.table.upsertService(service('ns', 'web', { clusterIP: VIP }));
  s.table.upsertSlice(slice('ns', 'web', 'web-1', [ep('10.244.1.5')]));
  s.table.upsertService(service('other', 'db', { clusterIP: '10.0.0.20', ports: [{ port: 5432, protocol: 'TCP' }] }));
  s.table.upsertService(service('ns', 'peers', { clusterIP: 'None', clusterIPs: ['None'] }));
  s.table.upsertSlice(
    slice('ns', 'peers', 'peers-1', [ep('10.244.1.7', { hostname: 'peer-0' }), ep('10.244.1.8', { hostname: 'peer-1' }), ep('10.244.1.9', { ready: false })]),
  );
  s.table.upsertService(service('ns', 'ext', { type: 'ExternalName', externalName: 'example.com.', ports: [] }));
  s.table.upsertService(service('ns', 'alias', { type: 'ExternalName', externalName: 'db.other.svc.cluster.local', ports: [] }));
  return s;
}

describe('search path (upstream GetPodDNS)', () => {
  it('ClusterFirst: <ns>.svc.<domain> svc.<domain> <domain>, then dnsConfig.searches, ndots 5', () => {
    expect(searchPath({ namespace: 'ns', dnsPolicy: 'ClusterFirst', searches: ['corp.example', 'svc.cluster.local'] }, 'cluster.local')).toEqual({
      searches: ['ns.svc.cluster.local', 'svc.cluster.local', 'cluster.local', 'corp.example'],
      ndots: 5,
    });
  });

  it("Default, and ClusterFirst on the host network, use the node's resolver; ClusterFirstWithHostNet the cluster's", () => {
    expect(searchPath({ namespace: 'ns', dnsPolicy: 'Default' }, 'cluster.local')).toBeUndefined();
    expect(searchPath({ namespace: 'ns', dnsPolicy: 'ClusterFirst', hostNetwork: true }, 'cluster.local')).toBeUndefined();
    expect(searchPath({ namespace: 'ns', dnsPolicy: 'ClusterFirstWithHostNet', hostNetwork: true }, 'cluster.local')?.searches[0]).toBe('ns.svc.cluster.local');
  });

  it('None: only dnsConfig.searches, ndots from dnsConfig.options', () => {
    const dns = podDns({
      metadata: { namespace: 'ns' },
      spec: { containers: [], dnsPolicy: 'None', dnsConfig: { searches: ['svc.cluster.local'], options: [{ name: 'ndots', value: '2' }] } },
    });
    expect(searchPath(dns, 'cluster.local')).toEqual({ searches: ['svc.cluster.local'], ndots: 2 });
  });

  it('tries the search domains first for names with fewer dots than ndots, the name first otherwise, only the name when it ends in a dot', () => {
    const path = { searches: ['ns.svc.cluster.local', 'svc.cluster.local'], ndots: 2 };
    expect(candidateNames('Web', path)).toEqual(['web.ns.svc.cluster.local', 'web.svc.cluster.local', 'web']);
    expect(candidateNames('a.b.c', path)).toEqual(['a.b.c', 'a.b.c.ns.svc.cluster.local', 'a.b.c.svc.cluster.local']);
    expect(candidateNames('web.ns.svc.cluster.local.', path)).toEqual(['web.ns.svc.cluster.local']);
  });
});

describe('lookup: Service names', () => {
  it("answers the ClusterIP for the full name and for each short form from the pod's namespace", () => {
    const { resolver } = cluster();
    const answer = { kind: 'addresses', name: 'web.ns.svc.cluster.local', addresses: [VIP] };
    for (const name of ['web', 'web.ns', 'web.ns.svc', 'web.ns.svc.cluster.local', 'web.ns.svc.cluster.local.', 'WEB.NS']) {
      expect(resolver.lookup(name, pod('ns')), name).toEqual(answer);
    }
    // From another namespace the bare name is not this Service; the namespaced ones are.
    expect(resolver.lookup('web', pod('other'))).toEqual({ kind: 'forward' });
    expect(resolver.lookup('web.ns', pod('other'))).toEqual(answer);
    expect(resolver.lookup('db', pod('other'))).toMatchObject({ addresses: ['10.0.0.20'] });
  });

  it("follows the pod's dnsPolicy: Default forwards every name", () => {
    const { resolver } = cluster({ pods: { 'ns/host': { namespace: 'ns', dnsPolicy: 'Default' } } });
    expect(resolver.lookup('web.ns.svc.cluster.local', pod('ns', 'host'))).toEqual({ kind: 'forward' });
  });

  it('forwards names outside the cluster and answers not-found for an unknown Service under svc.<domain>', () => {
    const { resolver } = cluster();
    expect(resolver.lookup('example.org', pod('ns'))).toEqual({ kind: 'forward' });
    expect(resolver.lookup('nosuch', pod('ns'))).toEqual({ kind: 'forward' });
    expect(resolver.lookup('nosuch.ns.svc.cluster.local', pod('ns'))).toEqual({
      kind: 'not-found',
      name: 'nosuch.ns.svc.cluster.local',
      message: 'nosuch.ns.svc.cluster.local: no such Service',
    });
  });

  it("headless: the ready endpoints' addresses, <hostname>.<service> names, not-found without a ready endpoint", () => {
    const { resolver, table } = cluster();
    expect(resolver.lookup('peers', pod('ns'))).toEqual({ kind: 'addresses', name: 'peers.ns.svc.cluster.local', addresses: ['10.244.1.7', '10.244.1.8'] });
    expect(resolver.lookup('peer-1.peers', pod('ns'))).toEqual({ kind: 'addresses', name: 'peer-1.peers.ns.svc.cluster.local', addresses: ['10.244.1.8'] });
    table.upsertSlice(slice('ns', 'peers', 'peers-1', [ep('10.244.1.7', { ready: false })]));
    expect(resolver.lookup('peers.ns.svc.cluster.local', pod('ns'))).toEqual({
      kind: 'not-found',
      name: 'peers.ns.svc.cluster.local',
      message: 'headless Service ns/peers has no ready endpoints',
    });
  });

  it('ExternalName: an alias to its externalName, followed while it names a Service of the cluster', () => {
    const { resolver } = cluster();
    expect(resolver.lookup('ext', pod('ns'))).toEqual({ kind: 'alias', name: 'ext.ns.svc.cluster.local', target: 'example.com' });
    expect(resolver.lookup('alias', pod('ns'))).toEqual({ kind: 'addresses', name: 'alias.ns.svc.cluster.local', addresses: ['10.0.0.20'] });
  });

  it('answers no name without a cluster domain', () => {
    const { resolver } = cluster({ domain: '' });
    expect(resolver.lookup('web.ns.svc.cluster.local', pod('ns'))).toEqual({ kind: 'forward' });
  });
});

describe('route: a host and port from a pod', () => {
  const client = { pod: pod('ns'), ip: '10.244.1.30' };

  it('a Service name or ClusterIP goes to an endpoint; a headless name to an endpoint itself; other hosts as given', () => {
    const { resolver } = cluster();
    const toWeb = { kind: 'connect', host: '10.244.1.5', port: 8080, service: { namespace: 'ns', name: 'web', port: '' } };
    expect(resolver.route('web', 80, client)).toEqual(toWeb);
    expect(resolver.route('web.ns.svc.cluster.local', 80, client)).toEqual(toWeb);
    expect(resolver.route(VIP, 80, client)).toEqual(toWeb);
    expect(resolver.route('peer-0.peers', 7000, client)).toEqual({ kind: 'connect', host: '10.244.1.7', port: 7000 });
    expect(resolver.route('example.org', 443, client)).toEqual({ kind: 'connect', host: 'example.org', port: 443 });
    expect(resolver.route('ext', 443, client)).toEqual({ kind: 'connect', host: 'example.com', port: 443 });
    expect(resolver.route('[fd00::1]', 80, client)).toEqual({ kind: 'connect', host: 'fd00::1', port: 80 });
  });

  it('a Service without ready endpoints is refused; an unknown cluster name is not found', () => {
    const { resolver, table } = cluster();
    table.upsertSlice(slice('ns', 'web', 'web-1', []));
    expect(resolver.route('web', 80, client)).toMatchObject({ kind: 'refused', service: { name: 'web' } });
    expect(resolver.route('nosuch.ns.svc.cluster.local', 80, client)).toMatchObject({ kind: 'not-found' });
  });
});
