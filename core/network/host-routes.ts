/**
 * The routes nodelet installs in the host's main routing table (`--pod-routes=host-gw`):
 * `<pod CIDR> via <node InternalIP>`, each marked with nodelet's own route protocol number
 * ({@link ROUTE_PROTOCOL}, shown as `proto 213` by `ip route`), so nodelet lists, replaces and
 * deletes only its own routes and leaves the operator's, a CNI plugin's or the kernel's alone.
 *
 * Changes are rtnetlink messages from the pod network's Perl helper where `perl` exists
 * (`addr-netlink.ts`); listing nodelet's routes (at start and on each resync) runs
 * `ip -j route show proto 213` through the helper shell.
 *
 *   add      `ip route add <cidr> via <ip> proto 213`       a route to the CIDR already there (not nodelet's): 'exists'
 *   replace  `ip route replace <cidr> via <ip> proto 213`   nodelet's own route to a node whose IP changed
 *   remove   `ip route del <cidr> proto 213`                 only a route of protocol 213; none there: done
 */
import ipaddr from 'ipaddr.js';
import { nodeletError } from '../errors/index.ts';
import { commandError, type IpCommand } from './pod-interface.ts';

/**
 * nodelet's route protocol number (`rtm_protocol`): unassigned in iproute2's `rt_protos`
 * (0-4 are the kernel's, 8-192 routing daemons'), so a route of this protocol is nodelet's.
 */
export const ROUTE_PROTOCOL = 213;

/** One route: a pod CIDR (canonical network address and prefix) via a gateway. */
export interface PodRoute {
  readonly dst: string;
  readonly via: string;
}

/** `cidr` with its host bits cleared, in canonical text (`fd00:1::/64`), or undefined when it is no CIDR. */
export function canonicalCidr(cidr: string): string | undefined {
  try {
    const [addr, prefix] = ipaddr.parseCIDR(cidr.trim());
    const network = addr.kind() === 'ipv4' ? ipaddr.IPv4.networkAddressFromCIDR(cidr.trim()) : ipaddr.IPv6.networkAddressFromCIDR(cidr.trim());
    return `${network.toString()}/${prefix}`;
  } catch {
    return undefined;
  }
}

/** Where nodelet's routes are read and written. */
export interface RouteTable {
  /** nodelet's routes (protocol {@link ROUTE_PROTOCOL}) in the main table, IPv4 and IPv6. */
  list(): Promise<PodRoute[]>;
  /** Adds a route; 'exists' when the CIDR already has one (someone else's: nodelet's are replaced). */
  add(route: PodRoute): Promise<'added' | 'exists'>;
  /** Replaces nodelet's route to `route.dst` (or adds it). */
  replace(route: PodRoute): Promise<void>;
  /** Deletes nodelet's route to `dst`; absent is fine. */
  remove(dst: string): Promise<void>;
}

/** The main routing table through an {@link IpCommand}. */
export function hostRouteTable(ip: IpCommand, protocol = ROUTE_PROTOCOL): RouteTable {
  const proto = String(protocol);
  const failed = (what: string, e: unknown) => nodeletError('NDL_NETWORK_ROUTE', `${what}: ${commandError(e)}`, e);
  const listFamily = async (family: '-4' | '-6'): Promise<PodRoute[]> => {
    const out = await ip(['-j', family, 'route', 'show', 'table', 'main', 'proto', proto]);
    const routes = JSON.parse(out.trim() || '[]') as { dst?: string; gateway?: string }[];
    return routes.flatMap((r) => {
      const dst = r.dst && canonicalCidr(r.dst.includes('/') ? r.dst : `${r.dst}/${family === '-4' ? 32 : 128}`);
      return dst && r.gateway ? [{ dst, via: r.gateway }] : [];
    });
  };
  return {
    async list() {
      try {
        return [...(await listFamily('-4')), ...(await listFamily('-6'))];
      } catch (e) {
        throw failed(`list the routes of protocol ${proto}`, e);
      }
    },
    async add({ dst, via }) {
      try {
        await ip(['route', 'add', dst, 'via', via, 'proto', proto]);
        return 'added';
      } catch (e) {
        if (/File exists/i.test(commandError(e))) return 'exists';
        throw failed(`add a route to ${dst} via ${via}`, e);
      }
    },
    async replace({ dst, via }) {
      try {
        await ip(['route', 'replace', dst, 'via', via, 'proto', proto]);
      } catch (e) {
        throw failed(`replace the route to ${dst} with one via ${via}`, e);
      }
    },
    async remove(dst) {
      try {
        await ip(['route', 'del', dst, 'proto', proto]);
      } catch (e) {
        // Not there: ESRCH ("No such process"; iproute2 with extended acks: "Error: ... No such process" or "not found").
        if (!/No such process|not found/i.test(commandError(e))) throw failed(`delete the route to ${dst}`, e);
      }
    },
  };
}
