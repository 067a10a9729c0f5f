/**
 * Services and EndpointSlices as the resolver uses them: the fields kube-proxy and the cluster
 * DNS read, taken from the API objects once per change (so a question reads plain maps).
 *
 *   V1Service ──serviceInfo──► ServiceInfo (virtual IPs, ports, policies, DNS shape)
 *   V1EndpointSlice[] of one Service ──endpointsByPort──► "name/protocol" → EndpointInfo[]
 *
 * Endpoint flags follow kube-proxy's EndpointSliceCache (pkg/proxy/endpointslicecache.go): an
 * unset `ready` or `serving` reads true, an unset `terminating` false; a port without a name
 * or number, an endpoint without an address and FQDN slices are skipped; only `addresses[0]`
 * counts; one address appearing twice keeps the non-terminating entry.
 */
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';
import type { V1EndpointSlice, V1Service } from '@kubernetes/client-node';
import type { ServiceProtocol } from '@nodelet/plugin-api/v1';

/** The label an EndpointSlice names its Service with. */
export const SERVICE_NAME_LABEL = 'kubernetes.io/service-name';

/** kube-proxy's default `sessionAffinityConfig.clientIP.timeoutSeconds` (3 hours). */
export const DEFAULT_AFFINITY_TIMEOUT_SECONDS = 10_800;

/** One port of a Service. */
export interface ServicePortInfo {
  /** `ports[].name` ('' when unset). */
  readonly name: string;
  readonly port: number;
  readonly protocol: ServiceProtocol;
}

/** A Service as the resolver reads it. */
export interface ServiceInfo {
  /** `namespace/name`. */
  readonly key: string;
  readonly namespace: string;
  readonly name: string;
  /** `clusterIP: None`: DNS answers the endpoints' addresses; there is no virtual IP. */
  readonly headless: boolean;
  /** `spec.clusterIPs` (or `clusterIP`), canonical, primary first; empty when headless or ExternalName. */
  readonly clusterIPs: readonly string[];
  /** `spec.externalIPs` and `status.loadBalancer.ingress[].ip`, canonical: pods reach them as kube-proxy routes them (cluster endpoints). */
  readonly externalIPs: readonly string[];
  /** An `ExternalName` Service's target (lower case, no trailing dot). */
  readonly externalName?: string;
  readonly ports: readonly ServicePortInfo[];
  /** `sessionAffinity: ClientIP`: how long an idle client keeps its endpoint, in ms; undefined without affinity. */
  readonly affinityMs?: number;
  /** `internalTrafficPolicy: Local`: ClusterIP traffic goes to this node's endpoints only. */
  readonly internalLocal: boolean;
}

/** One endpoint of one Service port. */
export interface EndpointInfo {
  /** `addresses[0]`, canonical. */
  readonly address: string;
  readonly family: 4 | 6;
  readonly port: number;
  readonly ready: boolean;
  readonly serving: boolean;
  readonly terminating: boolean;
  /** `nodeName` is this node. */
  readonly local: boolean;
  /** `hints.forZones[].name`; undefined without zone hints. */
  readonly zoneHints?: ReadonlySet<string>;
  /** `hints.forNodes[].name`; undefined without node hints. */
  readonly nodeHints?: ReadonlySet<string>;
  /** `hostname` (a headless Service's `<hostname>.<service>…` DNS name). */
  readonly hostname?: string;
}

/** An IP address in one text form (IPv6 compressed, lower case; IPv4-mapped IPv6 as such); undefined when `s` is not an address. */
export function canonicalIP(s: string): string | undefined {
  const bare = s.startsWith('[') && s.endsWith(']') ? s.slice(1, -1) : s;
  const family = isIP(bare);
  if (family === 4) return bare;
  if (family === 6) return ipaddr.parse(bare).toString();
  return undefined;
}

/** The key of a Service port's endpoints: its name and protocol. */
export const portKey = (name: string, protocol: string): string => `${name}/${protocol}`;

const PROTOCOLS: ReadonlySet<string> = new Set(['TCP', 'UDP', 'SCTP']);

/** The resolver's view of `svc`. */
export function serviceInfo(svc: V1Service): ServiceInfo {
  const namespace = svc.metadata?.namespace ?? '';
  const name = svc.metadata?.name ?? '';
  const spec = svc.spec ?? {};
  const ips = (list: readonly (string | undefined)[]) => list.map((ip) => (ip ? canonicalIP(ip) : undefined)).filter((ip): ip is string => ip !== undefined);
  const externalName = spec.type === 'ExternalName' && spec.externalName ? spec.externalName.replace(/\.$/, '').toLowerCase() : undefined;
  const headless = externalName === undefined && (spec.clusterIP === 'None' || spec.clusterIPs?.[0] === 'None');
  const clusterIPs = externalName !== undefined || headless ? [] : ips(spec.clusterIPs?.length ? spec.clusterIPs : [spec.clusterIP]);
  const externalIPs = externalName !== undefined ? [] : ips([...(spec.externalIPs ?? []), ...(svc.status?.loadBalancer?.ingress ?? []).map((i) => i.ip)]);
  const ports = (spec.ports ?? [])
    .filter((p) => Number.isInteger(p.port) && p.port > 0 && p.port < 65536)
    .map((p) => ({ name: p.name ?? '', port: p.port, protocol: (PROTOCOLS.has(p.protocol ?? 'TCP') ? (p.protocol ?? 'TCP') : 'TCP') as ServiceProtocol }));
  const timeout = spec.sessionAffinityConfig?.clientIP?.timeoutSeconds;
  const affinityMs =
    spec.sessionAffinity === 'ClientIP' ? (typeof timeout === 'number' && timeout > 0 ? timeout : DEFAULT_AFFINITY_TIMEOUT_SECONDS) * 1000 : undefined;
  return {
    key: `${namespace}/${name}`,
    namespace,
    name,
    headless,
    clusterIPs,
    externalIPs,
    externalName,
    ports,
    affinityMs,
    internalLocal: spec.internalTrafficPolicy === 'Local',
  };
}

/** The Service key (`namespace/name`) an EndpointSlice belongs to, or undefined when it names none. */
export function sliceService(slice: V1EndpointSlice): string | undefined {
  const name = slice.metadata?.labels?.[SERVICE_NAME_LABEL];
  return name ? `${slice.metadata?.namespace ?? ''}/${name}` : undefined;
}

/**
 * The endpoints of a Service's slices by port (`portKey(name, protocol)`), as kube-proxy's
 * EndpointSliceCache builds them (see the module comment). `nodeName` tells local endpoints.
 */
export function endpointsByPort(slices: Iterable<V1EndpointSlice>, nodeName: string): Map<string, EndpointInfo[]> {
  const byPort = new Map<string, Map<string, EndpointInfo>>();
  for (const slice of slices) {
    if (slice.addressType !== 'IPv4' && slice.addressType !== 'IPv6') continue;
    for (const port of slice.ports ?? []) {
      if (port.name === undefined || port.name === null || !port.port) continue;
      const key = portKey(port.name, port.protocol ?? 'TCP');
      let set = byPort.get(key);
      if (!set) byPort.set(key, (set = new Map()));
      for (const ep of slice.endpoints ?? []) {
        const address = ep.addresses?.[0] ? canonicalIP(ep.addresses[0]) : undefined;
        if (!address) continue;
        const c = ep.conditions ?? {};
        const ready = c.ready ?? true;
        const info: EndpointInfo = {
          address,
          family: isIP(address) === 6 ? 6 : 4,
          port: port.port,
          ready,
          serving: c.serving ?? true,
          terminating: c.terminating ?? false,
          local: !!nodeName && ep.nodeName === nodeName,
          zoneHints: ep.hints?.forZones?.length ? new Set(ep.hints.forZones.map((z) => z.name)) : undefined,
          nodeHints: ep.hints?.forNodes?.length ? new Set(ep.hints.forNodes.map((n) => n.name)) : undefined,
          hostname: ep.hostname?.toLowerCase(),
        };
        // The same address twice (a pod IP reused before the old Pod object went): keep the live one.
        if (!set.has(address) || !info.terminating) set.set(address, info);
      }
    }
  }
  return new Map([...byPort].map(([k, set]) => [k, [...set.values()]]));
}
