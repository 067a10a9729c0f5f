/** Small builders of Services and EndpointSlices for the resolver's unit tests. */
import type { V1Endpoint, V1EndpointSlice, V1Service, V1ServicePort, V1ServiceSpec } from '@kubernetes/client-node';
import { NodeServiceResolver, type ResolverOptions } from '../../../core/services/service-resolver.ts';
import { ServiceTable } from '../../../core/services/service-table.ts';
import type { PodDns } from '../../../core/services/dns-search.ts';

export const NODE = 'n1';

/** A Service `ns/name` with `spec` (ClusterIP type unless said). */
export function service(ns: string, name: string, spec: Partial<V1ServiceSpec> = {}, status?: V1Service['status']): V1Service {
  return { metadata: { namespace: ns, name, resourceVersion: '1' }, spec: { type: 'ClusterIP', ports: [{ port: 80, protocol: 'TCP' }], ...spec }, status };
}

/** One port of a Service. */
export const svcPort = (port: number, name?: string, protocol = 'TCP', targetPort?: number | string): V1ServicePort => ({ port, name, protocol, targetPort });

/** An endpoint: ready on `node` unless said. */
export function ep(
  address: string,
  o: Partial<V1Endpoint> & { ready?: boolean; serving?: boolean; terminating?: boolean; zones?: string[]; nodes?: string[] } = {},
): V1Endpoint {
  const { ready, serving, terminating, zones, nodes, ...rest } = o;
  return {
    addresses: [address],
    conditions: { ready: ready ?? true, serving, terminating },
    nodeName: NODE,
    hints: zones || nodes ? { forZones: zones?.map((name) => ({ name })), forNodes: nodes?.map((name) => ({ name })) } : undefined,
    ...rest,
  };
}

/** An EndpointSlice `name` of Service `ns/svc` with `endpoints` on `ports` (default one unnamed TCP port 8080). */
export function slice(
  ns: string,
  svc: string,
  name: string,
  endpoints: V1Endpoint[],
  ports: { name?: string; port: number; protocol?: string }[] = [{ name: '', port: 8080, protocol: 'TCP' }],
  addressType = 'IPv4',
): V1EndpointSlice {
  return {
    metadata: { namespace: ns, name, labels: { 'kubernetes.io/service-name': svc }, resourceVersion: '1' },
    addressType,
    endpoints,
    ports: ports.map((p) => ({ protocol: 'TCP', ...p })),
  };
}

/** A synced table and a resolver over it; `random` returns the values given, in turn (0 when they run out). */
export function setup(o: { domain?: string; zone?: string; random?: number[]; pods?: Record<string, PodDns>; now?: () => number } = {}) {
  const table = new ServiceTable(NODE);
  table.servicesSynced = true;
  table.slicesSynced = true;
  const draws = [...(o.random ?? [])];
  const opts: ResolverOptions = {
    table,
    clusterDomain: o.domain ?? 'cluster.local',
    topology: { nodeName: NODE, zone: o.zone },
    podDns: (ref) => o.pods?.[`${ref.namespace}/${ref.name}`],
    random: () => draws.shift() ?? 0,
    now: o.now,
  };
  return { table, resolver: new NodeServiceResolver(opts) };
}

/** A pod reference in `ns`. */
export const pod = (ns = 'default', name = 'client') => ({ namespace: ns, name, uid: `${ns}-${name}` });
