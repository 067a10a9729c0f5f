/**
 * IP forwarding for the pod network (`--pod-routes=host-gw`): a packet for a pod behind the
 * pod bridge arrives on the host's LAN interface and leaves on the bridge, and a pod's reply
 * the other way, so the host must forward between them. IPv4: `net.ipv4.ip_forward=1`, which
 * the kernel applies to every interface (the bridge's `net.ipv4.conf.<bridge>.forwarding`
 * too). IPv6 (only where the node has an IPv6 pod CIDR): `net.ipv6.conf.all.forwarding=1`,
 * the switch the kernel forwards IPv6 by (the per-interface ones only follow it); an interface
 * configured by router advertisements needs `accept_ra=2` to keep doing so (docs/pod-routes.md).
 * A switch already on is not written again.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { errorDetail, nodeletError } from '../errors/index.ts';

/** The sysctl that turns forwarding on for a family, relative to `/proc/sys`. */
export const FORWARDING_SYSCTL = { 4: 'net/ipv4/ip_forward', 6: 'net/ipv6/conf/all/forwarding' } as const;

/**
 * Turns forwarding on for `family` under `procSys` (default `/proc/sys`); resolves with true
 * when it was off. Throws `NDL_NETWORK_ROUTE` when the switch cannot be read or written (no
 * CAP_NET_ADMIN, a read-only /proc/sys).
 */
export async function enableForwarding(family: 4 | 6, procSys = '/proc/sys'): Promise<boolean> {
  const path = join(procSys, FORWARDING_SYSCTL[family]);
  try {
    if ((await readFile(path, 'utf8')).trim() === '1') return false;
    await writeFile(path, '1\n');
    return true;
  } catch (e) {
    throw nodeletError('NDL_NETWORK_ROUTE', `turn on forwarding (${FORWARDING_SYSCTL[family].replaceAll('/', '.')}=1): ${errorDetail(e)}`, e);
  }
}
