/**
 * Kubernetes Services for the connections a provider's workloads make themselves. nodelet runs
 * no kube-proxy: a ClusterIP is only a virtual address, which the node's kernel does not
 * translate. Core watches the cluster's Services and EndpointSlices once for the node and
 * answers, for one connection, where it goes; a provider asks wherever its workloads connect
 * out through its own code (an HTTP client, a socket `connect`) and connects there instead.
 * Everything here is synchronous and answered from core's cache: no API call per question.
 */
import type { PodRef } from './capabilities.ts';

/** A Service port's transport protocol (`spec.ports[].protocol`). */
export type ServiceProtocol = 'TCP' | 'UDP' | 'SCTP';

/** The Service port a connection was matched to. */
export interface ServicePortRef {
  /** The Service's namespace. */
  readonly namespace: string;
  /** The Service's name. */
  readonly name: string;
  /** The Service port's `name` (`''` for the unnamed port of a one-port Service). */
  readonly port: string;
}

/** Where a connection to one address and port goes: {@link ServiceResolver.resolve}'s answer. */
export type ServiceTarget =
  /** Not a Service's address: connect to it as given. */
  | { readonly kind: 'direct' }
  /** A Service's virtual address: connect to this ready endpoint (`address`, `port`) instead. */
  | { readonly kind: 'endpoint'; readonly address: string; readonly port: number; readonly service: ServicePortRef }
  /**
   * A Service's virtual address with no endpoint to take the connection: fail it at once with
   * "connection refused" (ECONNREFUSED), as kube-proxy's REJECT rule does. `message` says why.
   */
  | { readonly kind: 'refused'; readonly service: ServicePortRef; readonly message: string }
  /**
   * A Service's virtual address whose endpoints core cannot tell (it could not list
   * EndpointSlices, e.g. for lack of permission): fail the connection ("destination
   * unavailable"). `message` says why.
   */
  | { readonly kind: 'unavailable'; readonly service: ServicePortRef; readonly message: string };

/** What a name is in the cluster's DNS: {@link ServiceResolver.lookup}'s answer. */
export type ServiceNameAnswer =
  /** Not a name of the cluster (or the pod does not use cluster DNS): ask the node's resolver for the name as given. */
  | { readonly kind: 'forward' }
  /**
   * A Service: its ClusterIPs, or a headless Service's ready endpoint addresses (and
   * `<hostname>.<service>…` names, one endpoint's address). `name` is the fully qualified
   * name that matched (after the pod's search path).
   */
  | { readonly kind: 'addresses'; readonly name: string; readonly addresses: readonly string[] }
  /** An `ExternalName` Service: a CNAME to `target`, which the node's resolver resolves. */
  | { readonly kind: 'alias'; readonly name: string; readonly target: string }
  /** A name of the cluster with no address (no such Service, or a headless one without a ready endpoint): the lookup fails (NXDOMAIN). */
  | { readonly kind: 'not-found'; readonly name: string; readonly message: string };

/** Who makes a connection: {@link ServiceResolver.route}'s client. */
export interface ServiceClient {
  /** The pod making it: its namespace and DNS settings (`dnsPolicy`, `dnsConfig`) give the search path. */
  readonly pod: PodRef;
  /**
   * The address the connection comes from: the pod's IP (`ContainerSpec.network.podIPs[0]`).
   * `sessionAffinity: ClientIP` keys on it; without it, every connection picks an endpoint afresh.
   */
  readonly ip?: string;
}

/** Where a connection to a host (a name or an address) and port goes: {@link ServiceResolver.route}'s answer. */
export type ServiceRoute =
  /**
   * Connect to `host:port`: an IP address, or a name for the node's resolver (the name given,
   * or an ExternalName's target). `service` is set when a Service's address was translated to
   * one of its endpoints. Keep the original host in what the protocol carries (HTTP's `Host`,
   * TLS's server name), as a connection through kube-proxy would.
   */
  | { readonly kind: 'connect'; readonly host: string; readonly port: number; readonly service?: ServicePortRef }
  /** As {@link ServiceTarget}'s `refused`: fail the connection at once with "connection refused". */
  | { readonly kind: 'refused'; readonly service: ServicePortRef; readonly message: string }
  /** As {@link ServiceTarget}'s `unavailable`: fail the connection ("destination unavailable"). */
  | { readonly kind: 'unavailable'; readonly service: ServicePortRef; readonly message: string }
  /** As {@link ServiceNameAnswer}'s `not-found`: the name has no address (a DNS error). */
  | { readonly kind: 'not-found'; readonly name: string; readonly message: string };

/**
 * The node's Service resolver (`ProviderContext.services`): kube-proxy's translation and the
 * cluster DNS's Service records, for a provider's own outbound paths. Answers reflect an
 * EndpointSlice change as soon as nodelet's watch delivers it. Bad arguments (a port outside
 * 1–65535, an unknown protocol, an empty host) throw a branded `InvalidArgument` error.
 */
export interface ServiceResolver {
  /**
   * Where a connection to `address:port` goes: a ready endpoint of the Service whose ClusterIP
   * (or external IP) and port (`protocol`, default TCP) it is — chosen as kube-proxy chooses:
   * ready endpoints (serving-terminating ones when none is ready), `internalTrafficPolicy:
   * Local` (this node's endpoints only), topology hints (`hints.forZones`/`forNodes`, e.g.
   * from `trafficDistribution: PreferClose`) and `sessionAffinity: ClientIP` on `clientIP` —
   * or `direct` for an address that is not a Service's.
   */
  resolve(address: string, port: number, protocol?: ServiceProtocol, clientIP?: string): ServiceTarget;
  /**
   * What `name` is in the cluster's DNS for `pod`: `<service>.<namespace>.svc.<clusterDomain>`
   * and the short forms the pod's search path completes (`<service>`, `<service>.<namespace>`,
   * `<service>.<namespace>.svc` from the pod's namespace, per its `dnsPolicy` and `dnsConfig`,
   * as the kubelet writes them into resolv.conf), headless Services, ExternalName aliases;
   * `forward` for every other name.
   */
  lookup(name: string, pod: PodRef): ServiceNameAnswer;
  /**
   * {@link ServiceResolver.lookup} and {@link ServiceResolver.resolve} in one answer, for a
   * connection from `client` to `host:port` (`host` a name, an IPv4 address or an IPv6 address
   * with or without brackets).
   */
  route(host: string, port: number, client: ServiceClient, protocol?: ServiceProtocol): ServiceRoute;
}
