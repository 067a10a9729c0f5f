import type { NetworkInterfaceInfo } from 'node:os';
import type { V1Node } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { canonicalCidr } from '../../../core/network/host-routes.ts';
import { localPrefixes, planPodRoutes, type LocalPrefix } from '../../../core/network/route-plan.ts';

/** A Node with pod CIDRs and InternalIPs. */
const node = (name: string, cidrs: string[], ips: string[], legacy = false): V1Node => ({
  metadata: { name },
  spec: legacy ? { podCIDR: cidrs[0] } : { podCIDR: cidrs[0], podCIDRs: cidrs },
  status: { addresses: [...ips.map((address) => ({ type: 'InternalIP', address })), { type: 'Hostname', address: name }] },
});

const LAN: LocalPrefix[] = [
  { address: '192.0.2.10', prefix: 24 },
  { address: 'fd00:5::10', prefix: 64 },
];

describe('planPodRoutes', () => {
  it("routes every other node's pod CIDRs (IPv4 and IPv6) via its InternalIP of the same family on a subnet of this host", () => {
    const plan = planPodRoutes(
      [
        node('a', ['10.244.1.0/24', 'fd10:244:1::/64'], ['192.0.2.10', 'fd00:5::10']),
        node('b', ['10.244.2.0/24', 'fd10:244:2::/64'], ['192.0.2.11', 'fd00:5::11']),
        node('c', ['10.244.3.0/24'], ['192.0.2.12'], true),
      ],
      'a',
      LAN,
    );
    expect(plan.own).toEqual(['10.244.1.0/24', 'fd10:244:1::/64']);
    expect([...plan.routes.values()]).toEqual([
      { dst: '10.244.2.0/24', via: '192.0.2.11', node: 'b' },
      { dst: 'fd10:244:2::/64', via: 'fd00:5::11', node: 'b' },
      { dst: '10.244.3.0/24', via: '192.0.2.12', node: 'c' },
    ]);
    expect(plan.skipped).toEqual([]);
  });

  it('skips, with the reason, what a host-gw route cannot reach or must not touch', () => {
    const plan = planPodRoutes(
      [
        node('self', ['10.244.1.0/24'], ['192.0.2.10']),
        node('no-cidr', [], ['192.0.2.20']),
        node('remote', ['10.244.4.0/24'], ['198.51.100.7']),
        node('v4-only', ['fd10:244:5::/64'], ['192.0.2.21']),
        node('same-host', ['10.244.6.0/24'], ['192.0.2.10']),
        node('loopback', ['10.244.7.0/24'], ['127.0.0.1']),
        node('link-local', ['fd10:244:8::/64'], ['fe80::1']),
        node('overlaps-me', ['10.244.0.0/16'], ['192.0.2.22']),
        node('x-first', ['10.244.9.0/24'], ['192.0.2.23']),
        node('y-second', ['10.244.9.0/25'], ['192.0.2.24']),
        node('bad', ['ten/24'], ['192.0.2.25']),
      ],
      'self',
      LAN,
    );
    expect([...plan.routes.keys()]).toEqual(['10.244.9.0/24']);
    expect(plan.skipped).toEqual([
      { node: 'bad', cidr: 'ten/24', why: 'not a CIDR' },
      { node: 'link-local', cidr: 'fd10:244:8::/64', why: 'its InternalIP fe80::1 is a link-local address' },
      { node: 'loopback', cidr: '10.244.7.0/24', why: 'its InternalIP 127.0.0.1 is a loopback address' },
      { node: 'overlaps-me', cidr: '10.244.0.0/16', why: 'it overlaps the pod CIDR of this node' },
      { node: 'remote', cidr: '10.244.4.0/24', why: "its InternalIP 198.51.100.7 is on no subnet of this host's interfaces" },
      { node: 'same-host', cidr: '10.244.6.0/24', why: 'its InternalIP 192.0.2.10 is an address of this host' },
      { node: 'v4-only', cidr: 'fd10:244:5::/64', why: 'the node has no IPv6 InternalIP' },
      { node: 'y-second', cidr: '10.244.9.0/25', why: 'it overlaps the pod CIDR of node x-first' },
    ]);
  });

  it('a link-local InternalIP on a link-local subnet of this host is still not a gateway', () => {
    const plan = planPodRoutes([node('a', ['fd10::/64'], ['fe80::2'])], 'me', [{ address: 'fe80::1', prefix: 64 }]);
    expect(plan.skipped).toEqual([{ node: 'a', cidr: 'fd10::/64', why: 'its InternalIP fe80::2 is a link-local address' }]);
  });

  it('writes destinations canonically (host bits cleared, IPv6 compressed), as the kernel lists them', () => {
    const plan = planPodRoutes([node('a', ['10.244.2.7/24', 'FD10:0244:0002:0000::/64'], ['192.0.2.11', 'fd00:5::11'])], 'me', LAN);
    expect([...plan.routes.keys()]).toEqual(['10.244.2.0/24', 'fd10:244:2::/64']);
    expect(plan.own).toEqual([]);
    expect(canonicalCidr('fd00:0:0:0:1::/80')).toBe('fd00::1:0:0:0/80');
    expect(canonicalCidr('10.1.2.3')).toBeUndefined();
  });
});

describe('localPrefixes', () => {
  it("takes every interface's addresses but loopback and the pod bridge", () => {
    const a = (address: string, cidr: string, internal = false) => ({ address, cidr, internal }) as NetworkInterfaceInfo;
    expect(
      localPrefixes(
        {
          lo: [a('127.0.0.1', '127.0.0.1/8', true), a('::1', '::1/128', true)],
          eth0: [a('192.0.2.10', '192.0.2.10/24'), a('fd00:5::10', 'fd00:5::10/64')],
          nodelet0: [a('10.244.1.1', '10.244.1.1/24'), a('10.244.1.2', '10.244.1.2/32')],
        },
        'nodelet0',
      ),
    ).toEqual([
      { address: '192.0.2.10', prefix: 24 },
      { address: 'fd00:5::10', prefix: 64 },
    ]);
  });
});
