/**
 * A pod's DNS search path, as the upstream kubelet writes it into the pod's resolv.conf
 * (pkg/kubelet/network/dns/dns.go, GetPodDNS), and the names a resolver tries for a name:
 *
 *   dnsPolicy ClusterFirst (not hostNetwork), ClusterFirstWithHostNet
 *       → search <ns>.svc.<domain> svc.<domain> <domain>, + dnsConfig.searches; options ndots:5
 *   dnsPolicy Default, ClusterFirst with hostNetwork
 *       → the node's resolver: no cluster name is answered
 *   dnsPolicy None
 *       → search dnsConfig.searches only (ndots from dnsConfig.options, else 1)
 *
 * The node's own search domains, which the kubelet appends after the cluster's, are left to
 * the node's resolver: a name that is no cluster name is forwarded to it as given, and it
 * applies them itself. Without a cluster domain (`--cluster-domain`), as upstream, the
 * cluster's domains are not searched.
 *
 * Candidates, as glibc's resolver orders them: a name ending in `.` is tried only as given; a
 * name with at least `ndots` dots is tried as given first, then with each search domain; any
 * other name with each search domain first, then as given.
 */
import type { V1Pod } from '@kubernetes/client-node';

/** kubelet's `ndots` for ClusterFirst pods. */
export const CLUSTER_NDOTS = 5;
/** glibc's default `ndots`. */
export const DEFAULT_NDOTS = 1;

/** What decides a pod's search path. */
export interface PodDns {
  readonly namespace: string;
  readonly dnsPolicy?: string;
  readonly hostNetwork?: boolean;
  /** `dnsConfig.searches`. */
  readonly searches?: readonly string[];
  /** `ndots` from `dnsConfig.options`, when given as a number. */
  readonly ndots?: number;
}

/** A pod's search path; undefined when the pod does not use the cluster's DNS. */
export interface SearchPath {
  readonly searches: readonly string[];
  readonly ndots: number;
}

/** The DNS settings of `pod` (its namespace, policy and dnsConfig). */
export function podDns(pod: V1Pod): PodDns {
  const ndots = pod.spec?.dnsConfig?.options?.filter((o) => o.name === 'ndots').pop()?.value;
  const n = ndots !== undefined && /^\d+$/.test(ndots) ? Math.min(15, Number(ndots)) : undefined;
  return {
    namespace: pod.metadata?.namespace ?? 'default',
    dnsPolicy: pod.spec?.dnsPolicy,
    hostNetwork: pod.spec?.hostNetwork,
    searches: pod.spec?.dnsConfig?.searches,
    ndots: n,
  };
}

const clean = (d: string) => d.replace(/^\.+|\.+$/g, '').toLowerCase();

/** The search path of a pod with `dns` in a cluster whose domain is `clusterDomain` (see the module comment). */
export function searchPath(dns: PodDns, clusterDomain: string): SearchPath | undefined {
  const policy = dns.dnsPolicy ?? 'ClusterFirst';
  const own = (dns.searches ?? []).map(clean).filter((d) => d !== '');
  if (policy === 'None') return { searches: unique(own), ndots: dns.ndots ?? DEFAULT_NDOTS };
  const cluster = policy === 'ClusterFirstWithHostNet' || (policy === 'ClusterFirst' && !dns.hostNetwork);
  if (!cluster) return undefined;
  const domain = clean(clusterDomain);
  const base = domain ? [`${dns.namespace}.svc.${domain}`, `svc.${domain}`, domain] : [];
  return { searches: unique([...base, ...own]), ndots: dns.ndots ?? CLUSTER_NDOTS };
}

function unique(list: readonly string[]): string[] {
  return [...new Set(list)];
}

/** The fully qualified names tried for `name` on `path`, in order (see the module comment). */
export function candidateNames(name: string, path: SearchPath): string[] {
  const n = name.toLowerCase();
  if (n.endsWith('.')) return [n.slice(0, -1)];
  const dots = n.split('.').length - 1;
  const searched = path.searches.map((d) => `${n}.${d}`);
  return dots >= path.ndots ? [n, ...searched] : [...searched, n];
}
