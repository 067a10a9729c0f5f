/**
 * Which routes to other nodes' pod CIDRs this host should have (`--pod-routes=host-gw`), from
 * the Nodes and the host's own interface addresses: for every other node, each of its pod CIDRs
 * (`spec.podCIDRs`, else `spec.podCIDR`) via its InternalIP of the same family, when that IP is
 * on a subnet this host has an address in (a host-gw route's gateway must be directly
 * reachable: one L2 segment). What cannot be routed so is listed with the reason, for the log.
 *
 *   node ─ own? ──────────────────────────────────────────────► (its CIDRs: this node's own)
 *     └ each pod CIDR ─ no InternalIP of its family ──────────► skipped
 *                      ─ InternalIP is this host's / link-local ► skipped
 *                      ─ InternalIP on no subnet of this host ───► skipped (a real CNI or cloud routes reach it)
 *                      ─ overlaps this node's CIDR, or another
 *                        node's (the first by name wins) ──────► skipped
 *                      └────────────────────────────────────────► route <CIDR> via <InternalIP>
 */
import type { NetworkInterfaceInfo } from 'node:os';
import type { V1Node } from '@kubernetes/client-node';
import ipaddr from 'ipaddr.js';
import { canonicalCidr, type PodRoute } from './host-routes.ts';

/** An address of this host with its prefix (`192.0.2.10/24`). */
export interface LocalPrefix {
  readonly address: string;
  readonly prefix: number;
}

/** A route to one node's pod CIDR. */
export interface PlannedRoute extends PodRoute {
  readonly node: string;
}

/** A pod CIDR of another node that gets no route, and why. */
export interface SkippedCidr {
  readonly node: string;
  readonly cidr: string;
  readonly why: string;
}

/** The routes this host should have. */
export interface RoutePlan {
  /** This node's own pod CIDRs (empty while it has none). */
  readonly own: readonly string[];
  /** By destination. */
  readonly routes: ReadonlyMap<string, PlannedRoute>;
  readonly skipped: readonly SkippedCidr[];
}

/** The addresses of this host's interfaces that may be a route's way out: not loopback, not `exclude` (the pod bridge). */
export function localPrefixes(interfaces: NodeJS.Dict<NetworkInterfaceInfo[]>, exclude: string): LocalPrefix[] {
  return Object.entries(interfaces).flatMap(([name, addrs]) =>
    name === exclude ? [] : (addrs ?? []).filter((a) => !a.internal && a.cidr).map((a) => ({ address: a.address, prefix: Number(a.cidr!.split('/')[1]) })),
  );
}

/** A node's pod CIDRs as the API gives them. */
export function podCidrsOf(node: V1Node): string[] {
  const list = node.spec?.podCIDRs?.length ? node.spec.podCIDRs : node.spec?.podCIDR ? [node.spec.podCIDR] : [];
  return list.filter((c) => c);
}

const parse = (ip: string) => (ipaddr.isValid(ip) ? ipaddr.parse(ip) : undefined);
type Addr = ipaddr.IPv4 | ipaddr.IPv6;

/** Plans the routes (see the module comment); `self` is this node's name. */
export function planPodRoutes(nodes: readonly V1Node[], self: string, local: readonly LocalPrefix[]): RoutePlan {
  const mine = nodes.find((n) => n.metadata?.name === self);
  const own = mine ? podCidrsOf(mine) : [];
  const taken: [Addr, number, string][] = own.flatMap((c) => {
    const canon = canonicalCidr(c);
    return canon ? [[...ipaddr.parseCIDR(canon), 'this node'] as [Addr, number, string]] : [];
  });
  const localAddrs = local.flatMap((l) => {
    const a = parse(l.address);
    return a ? [{ a, prefix: l.prefix }] : [];
  });
  const routes = new Map<string, PlannedRoute>();
  const skipped: SkippedCidr[] = [];
  const others = nodes.filter((n) => n.metadata?.name && n.metadata.name !== self).sort((a, b) => (a.metadata!.name! < b.metadata!.name! ? -1 : 1));
  for (const node of others) {
    const name = node.metadata!.name!;
    const internal = (node.status?.addresses ?? []).filter((a) => a.type === 'InternalIP').flatMap((a) => parse(a.address) ?? []);
    for (const cidr of podCidrsOf(node)) {
      const skip = (why: string) => skipped.push({ node: name, cidr, why });
      const dst = canonicalCidr(cidr);
      if (!dst) {
        skip('not a CIDR');
        continue;
      }
      const [net, bits] = ipaddr.parseCIDR(dst);
      const via = internal.find((a) => a.kind() === net.kind());
      if (!via) {
        skip(`the node has no ${net.kind() === 'ipv4' ? 'IPv4' : 'IPv6'} InternalIP`);
        continue;
      }
      const viaText = via.toString();
      if (localAddrs.some((l) => l.a.kind() === via.kind() && l.a.toString() === viaText)) {
        skip(`its InternalIP ${viaText} is an address of this host`);
        continue;
      }
      if (via.range() === 'linkLocal' || via.range() === 'loopback') {
        skip(`its InternalIP ${viaText} is ${via.range() === 'loopback' ? 'a loopback' : 'a link-local'} address`);
        continue;
      }
      if (!localAddrs.some((l) => l.a.kind() === via.kind() && via.match(l.a, l.prefix))) {
        skip(`its InternalIP ${viaText} is on no subnet of this host's interfaces`);
        continue;
      }
      const clash = taken.find(([n, b]) => n.kind() === net.kind() && (net.match(n, b) || n.match(net, bits)));
      if (clash) {
        skip(`it overlaps the pod CIDR of ${clash[2]}`);
        continue;
      }
      taken.push([net, bits, `node ${name}`]);
      routes.set(dst, { dst, via: viaText, node: name });
    }
  }
  return { own, routes, skipped };
}
