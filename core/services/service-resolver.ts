/**
 * The node's Service resolver (plugin-api `ServiceResolver`): kube-proxy's translation of a
 * Service's virtual address to an endpoint, and the cluster DNS's Service records, answered
 * from the {@link ServiceTable} for the outbound paths of providers' workloads.
 *
 *   route(host, port, client)
 *     host an IP ──► resolve(ip, port) ──► direct | endpoint | refused | unavailable
 *     host a name ─► lookup(name, pod) ──► forward (node's resolver) | alias (ExternalName target)
 *                                       | not-found | addresses ──pick one──► resolve(address, port)
 *
 *   resolve: the Service port of ip:port/protocol ──► its endpoints of the address's family
 *            ──► usable ones (endpoint-categories.ts: ready, Local policy, topology hints)
 *            ──► none: refused │ ClientIP affinity: the client's endpoint │ else one at random
 *
 *   lookup:  the pod's search path (dns-search.ts) ──► each candidate name under
 *            svc.<cluster domain>: <service>.<ns> (ClusterIPs; a headless Service's ready
 *            addresses; an ExternalName's target, followed while it is a cluster name) or
 *            <hostname>.<service>.<ns> (a headless Service's endpoint) ──► the first one that
 *            exists; none: not-found for a name under svc.<domain>, else forward
 */
import { isIP } from 'node:net';
import {
  providerError,
  type PodRef,
  type ServiceClient,
  type ServiceNameAnswer,
  type ServicePortRef,
  type ServiceProtocol,
  type ServiceResolver,
  type ServiceRoute,
  type ServiceTarget,
} from '@nodelet/plugin-api/v1';
import { candidateNames, searchPath, type PodDns } from './dns-search.ts';
import { clusterEndpoints, localEndpoints, type NodeTopology } from './endpoint-categories.ts';
import { canonicalIP, type EndpointInfo, type ServiceInfo } from './service-model.ts';
import type { ServiceTable, VirtualPort } from './service-table.ts';
import { SessionAffinity } from './session-affinity.ts';

/** What the resolver is built from. */
export interface ResolverOptions {
  readonly table: ServiceTable;
  /** `--cluster-domain` ('' when unset: no cluster name is answered). */
  readonly clusterDomain: string;
  readonly topology: NodeTopology;
  /** The DNS settings of a pod on this node; undefined for a pod core does not know (its namespace's ClusterFirst path is used). */
  readonly podDns: (pod: PodRef) => PodDns | undefined;
  /** Picks endpoints (default Math.random), as kube-proxy's random choice. */
  readonly random?: () => number;
  /** The clock of session affinity (default Date.now). */
  readonly now?: () => number;
}

/** How many ExternalName aliases inside the cluster are followed before the target is forwarded as is. */
const MAX_ALIASES = 8;
const PROTOCOLS: ReadonlySet<string> = new Set(['TCP', 'UDP', 'SCTP']);

/** A lookup's answer, with whether its addresses are a headless Service's endpoints. */
type Answer = Exclude<ServiceNameAnswer, { kind: 'addresses' }> | (Extract<ServiceNameAnswer, { kind: 'addresses' }> & { readonly headless?: boolean });

/** The resolver (see the module comment). */
export class NodeServiceResolver implements ServiceResolver {
  private readonly affinity: SessionAffinity;
  private readonly random: () => number;
  private readonly domain: string;

  constructor(private readonly o: ResolverOptions) {
    this.affinity = new SessionAffinity(o.now);
    this.random = o.random ?? Math.random;
    this.domain = o.clusterDomain.replace(/^\.+|\.+$/g, '').toLowerCase();
  }

  resolve(address: string, port: number, protocol: ServiceProtocol = 'TCP', clientIP?: string): ServiceTarget {
    checkPort(port);
    checkProtocol(protocol);
    const ip = canonicalIP(address);
    if (ip === undefined) throw providerError('InvalidArgument', `resolve: ${JSON.stringify(address)} is not an IP address`);
    const vp = this.o.table.virtualPort(ip, port, protocol);
    if (!vp) return { kind: 'direct' };
    const service = portRef(vp);
    if (!this.o.table.slicesSynced) {
      return { kind: 'unavailable', service, message: `the endpoints of Service ${vp.service.key} are not known: ${this.o.table.slicesProblem}` };
    }
    const family = isIP(ip) === 6 ? 6 : 4;
    const all = this.o.table.portEndpoints(vp.service.key, vp.port.name, protocol).filter((ep) => ep.family === family);
    const local = !vp.external && vp.service.internalLocal;
    const { usable, anyEndpoints } = local ? localEndpoints(all) : clusterEndpoints(all, this.o.topology);
    if (usable.length === 0) {
      const why = local && anyEndpoints ? 'has no ready endpoint on this node (internalTrafficPolicy: Local)' : 'has no ready endpoints';
      return { kind: 'refused', service, message: `Service ${vp.service.key} port ${describePort(vp)} ${why}` };
    }
    const ttl = vp.service.affinityMs;
    const client = clientIP === undefined ? undefined : canonicalIP(clientIP);
    const ep =
      ttl !== undefined && client !== undefined
        ? this.affinity.choose(`${vp.service.key}|${vp.port.name}/${protocol}/${family}`, client, ttl, usable, (u) => this.pick(u))
        : this.pick(usable);
    return { kind: 'endpoint', address: ep.address, port: ep.port, service };
  }

  lookup(name: string, pod: PodRef): ServiceNameAnswer {
    const answer = this.answerFor(name, pod);
    if (answer.kind !== 'addresses') return answer;
    const { headless: _, ...plain } = answer;
    return plain;
  }

  route(host: string, port: number, client: ServiceClient, protocol: ServiceProtocol = 'TCP'): ServiceRoute {
    checkPort(port);
    checkProtocol(protocol);
    if (typeof host !== 'string' || host === '') throw providerError('InvalidArgument', 'route: the host is empty');
    const ip = canonicalIP(host);
    if (ip !== undefined) return this.routeIP(ip, port, protocol, client.ip);
    const answer = this.answerFor(host, client.pod);
    switch (answer.kind) {
      case 'forward':
        return { kind: 'connect', host, port };
      case 'alias':
        return { kind: 'connect', host: answer.target, port };
      case 'not-found':
        return answer;
      case 'addresses': {
        const address = answer.headless ? this.pickAddress(answer.addresses, client.ip) : preferFamily(answer.addresses, client.ip);
        return this.routeIP(address, port, protocol, client.ip);
      }
    }
  }

  private routeIP(ip: string, port: number, protocol: ServiceProtocol, clientIP: string | undefined): ServiceRoute {
    const t = this.resolve(ip, port, protocol, clientIP);
    switch (t.kind) {
      case 'direct':
        return { kind: 'connect', host: ip, port };
      case 'endpoint':
        return { kind: 'connect', host: t.address, port: t.port, service: t.service };
      default:
        return t;
    }
  }

  private answerFor(name: string, pod: PodRef): Answer {
    if (typeof name !== 'string' || name === '' || name === '.') throw providerError('InvalidArgument', 'lookup: the name is empty');
    if (!this.domain || !this.o.table.servicesSynced) return { kind: 'forward' };
    const dns = this.o.podDns(pod) ?? { namespace: pod.namespace };
    const path = searchPath(dns, this.domain);
    if (!path) return { kind: 'forward' };
    for (const fqdn of candidateNames(name, path)) {
      const found = this.clusterName(fqdn, 0);
      if (found) return found;
    }
    const absolute = name.toLowerCase().replace(/\.$/, '');
    if (absolute.endsWith(`.svc.${this.domain}`)) return { kind: 'not-found', name: absolute, message: `${absolute}: no such Service` };
    return { kind: 'forward' };
  }

  /** The answer for the fully qualified `fqdn` when it names a Service (or an endpoint of a headless one); undefined otherwise (NXDOMAIN: the next candidate). */
  private clusterName(fqdn: string, depth: number): Answer | undefined {
    const suffix = `.svc.${this.domain}`;
    if (!fqdn.endsWith(suffix)) return undefined;
    const labels = fqdn.slice(0, -suffix.length).split('.');
    if (labels.length === 2) {
      const svc = this.o.table.service(labels[1]!, labels[0]!);
      return svc ? this.serviceAnswer(fqdn, svc, depth) : undefined;
    }
    if (labels.length === 3) {
      const svc = this.o.table.service(labels[2]!, labels[1]!);
      if (!svc?.headless) return undefined;
      const ep = this.readyAddresses(svc).find((e) => e.hostname === labels[0]);
      return ep ? { kind: 'addresses', name: fqdn, addresses: [ep.address], headless: true } : undefined;
    }
    return undefined;
  }

  private serviceAnswer(fqdn: string, svc: ServiceInfo, depth: number): Answer {
    if (svc.externalName !== undefined) {
      const inCluster = depth < MAX_ALIASES ? this.clusterName(svc.externalName, depth + 1) : undefined;
      if (inCluster) return inCluster.kind === 'forward' ? inCluster : { ...inCluster, name: fqdn };
      return { kind: 'alias', name: fqdn, target: svc.externalName };
    }
    if (svc.headless) {
      const addresses = [...new Set(this.readyAddresses(svc).map((e) => e.address))];
      if (addresses.length > 0) return { kind: 'addresses', name: fqdn, addresses, headless: true };
      return { kind: 'not-found', name: fqdn, message: `headless Service ${svc.key} has no ready endpoints` };
    }
    if (svc.clusterIPs.length > 0) return { kind: 'addresses', name: fqdn, addresses: svc.clusterIPs };
    return { kind: 'not-found', name: fqdn, message: `Service ${svc.key} has no ClusterIP` };
  }

  /** A headless Service's endpoints the cluster DNS publishes: the ready ones. */
  private readyAddresses(svc: ServiceInfo): EndpointInfo[] {
    return this.o.table.allEndpoints(svc.key).filter((e) => e.ready);
  }

  private pick<T>(list: readonly T[]): T {
    return list[Math.min(list.length - 1, Math.floor(this.random() * list.length))]!;
  }

  /** One of a headless Service's addresses, at random (the cluster DNS shuffles them), of the client's family when there is one. */
  private pickAddress(addresses: readonly string[], clientIP: string | undefined): string {
    const family = clientIP === undefined ? 0 : isIP(clientIP);
    const same = addresses.filter((a) => isIP(a) === family);
    return this.pick(same.length > 0 ? same : addresses);
  }
}

/** The first of a Service's ClusterIPs of the client's family, else its primary one. */
function preferFamily(addresses: readonly string[], clientIP: string | undefined): string {
  const family = clientIP === undefined ? 0 : isIP(clientIP);
  return addresses.find((a) => isIP(a) === family) ?? addresses[0]!;
}

function portRef(vp: VirtualPort): ServicePortRef {
  return { namespace: vp.service.namespace, name: vp.service.name, port: vp.port.name };
}

function describePort(vp: VirtualPort): string {
  return vp.port.name ? `${vp.port.name} (${vp.port.port}/${vp.port.protocol})` : `${vp.port.port}/${vp.port.protocol}`;
}

function checkPort(port: number): void {
  if (!Number.isInteger(port) || port < 1 || port > 65535) throw providerError('InvalidArgument', `port ${String(port)} is not a port number (1-65535)`);
}

function checkProtocol(protocol: string): void {
  if (!PROTOCOLS.has(protocol)) throw providerError('InvalidArgument', `protocol ${JSON.stringify(protocol)} is not TCP, UDP or SCTP`);
}
