import { describe, expect, it } from 'vitest';
import { parsePodCidr } from '../../../core/network/cidr.ts';

describe('parsePodCidr', () => {
  it('numbers an IPv4 /24: gateway .1, pods .2-.254, broadcast kept free', () => {
    const c = parsePodCidr('10.244.1.0/24');
    expect(c).toMatchObject({ text: '10.244.1.0/24', family: 4, prefix: 24, gateway: '10.244.1.1', firstOffset: 2n, lastOffset: 254n });
    expect(c.at(2n)).toBe('10.244.1.2');
    expect(c.at(c.lastOffset)).toBe('10.244.1.254');
    expect(c.offsetOf('10.244.1.7')).toBe(7n);
    expect(c.offsetOf('10.244.2.7')).toBeUndefined();
    expect(c.offsetOf('fd00::7')).toBeUndefined();
  });

  it('clears host bits and handles small prefixes (/30 has one pod address; /31 and /32 none)', () => {
    expect(parsePodCidr('10.1.2.3/28').text).toBe('10.1.2.0/28');
    const c = parsePodCidr('192.168.5.4/30');
    expect([c.at(c.firstOffset), c.at(c.lastOffset)]).toEqual(['192.168.5.6', '192.168.5.6']);
    expect(() => parsePodCidr('192.168.5.4/31')).toThrow(/NDL|no address for pods/);
    expect(() => parsePodCidr('192.168.5.4/32')).toThrow(/no address for pods/);
  });

  it('parses an IPv6 /64 (no broadcast address) and refuses text that is no CIDR', () => {
    const c = parsePodCidr('fd00:10:244:1::/64');
    expect(c).toMatchObject({ family: 6, prefix: 64, gateway: 'fd00:10:244:1::1' });
    expect(c.at(2n)).toBe('fd00:10:244:1::2');
    expect(c.lastOffset).toBe((1n << 64n) - 1n);
    expect(() => parsePodCidr('10.244.1.0')).toThrow(/not a CIDR/);
    expect(() => parsePodCidr('nonsense/24')).toThrow(/not a CIDR/);
  });
});
