/**
 * Pod CIDR arithmetic: parses an IPv4 or IPv6 CIDR (with `ipaddr.js`, a kept
 * npm library, for the text forms) and numbers its addresses as offsets from
 * the network address, so the allocator can hand out "the lowest free offset".
 *
 * The address plan of a node's pod CIDR (as upstream's kubenet/host-local):
 *
 *   offset 0          network address          never allocated
 *   offset 1          gateway (on the bridge)  never allocated
 *   offset 2 … last   pod IPs                  allocated lowest-free first
 *   last + 1 (IPv4)   broadcast                never allocated
 */
import ipaddr from 'ipaddr.js';
import { nodeletError } from '../errors/index.ts';

/** A parsed pod CIDR. */
export interface PodCidr {
  /** The CIDR in canonical form (network address / prefix), e.g. `10.244.1.0/24`. */
  readonly text: string;
  readonly family: 4 | 6;
  readonly prefix: number;
  /** The gateway address (offset 1) nodelet puts on the pod interface. */
  readonly gateway: string;
  /** The first and last offsets pods may get. */
  readonly firstOffset: bigint;
  readonly lastOffset: bigint;
  /** The address at `offset` from the network address. */
  at(offset: bigint): string;
  /** The offset of `ip`, or undefined when it is outside the CIDR. */
  offsetOf(ip: string): bigint | undefined;
}

const toBig = (bytes: number[]): bigint => bytes.reduce((n, b) => (n << 8n) | BigInt(b), 0n);

function toBytes(n: bigint, len: number): number[] {
  const out = new Array<number>(len);
  for (let i = len - 1; i >= 0; i--) {
    out[i] = Number(n & 0xffn);
    n >>= 8n;
  }
  return out;
}

/** Parses a pod CIDR; host bits are cleared. Throws `NDL_NETWORK_CIDR` when it holds no address for a pod. */
export function parsePodCidr(text: string): PodCidr {
  let parsed: [ipaddr.IPv4 | ipaddr.IPv6, number];
  try {
    parsed = ipaddr.parseCIDR(text.trim());
  } catch {
    throw nodeletError('NDL_NETWORK_CIDR', `${JSON.stringify(text)} is not a CIDR such as 10.244.1.0/24 or fd00:10:244:1::/64`);
  }
  const [addr, prefix] = parsed;
  const family = addr.kind() === 'ipv4' ? 4 : 6;
  const bits = family === 4 ? 32 : 128;
  const len = bits / 8;
  const hostBits = BigInt(bits - prefix);
  const network = (toBig(addr.toByteArray()) >> hostBits) << hostBits;
  const size = 1n << hostBits;
  // IPv4 keeps the broadcast address free; IPv6 has none.
  const lastOffset = family === 4 ? size - 2n : size - 1n;
  if (lastOffset < 2n) throw nodeletError('NDL_NETWORK_CIDR', `${text} has no address for pods (the network address and gateway take the whole prefix)`);
  const at = (offset: bigint) => ipaddr.fromByteArray(toBytes(network + offset, len)).toString();
  return {
    text: `${at(0n)}/${prefix}`,
    family,
    prefix,
    gateway: at(1n),
    firstOffset: 2n,
    lastOffset,
    at,
    offsetOf(ip) {
      if (!ipaddr.isValid(ip)) return undefined;
      const a = ipaddr.parse(ip);
      if (a.kind() !== addr.kind()) return undefined;
      const off = toBig(a.toByteArray()) - network;
      return off >= 0n && off < size ? off : undefined;
    },
  };
}
