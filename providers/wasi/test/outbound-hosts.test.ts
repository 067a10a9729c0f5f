/**
 * The outbound allow-list (src/outbound-hosts.mjs) against the examples Spin documents and tests for
 * `allowed_outbound_hosts` (spinframework/spin, crates/outbound-networking-config/src/allowed_hosts.rs:
 * its parse and `allows` tests), plus the pod annotation's two forms.
 */
import { describe, expect, it } from 'vitest';
import {
  AllowedHostError,
  allowsDestination,
  allowsRelative,
  allowsUrl,
  parseAllowedHost,
  parseAllowedHosts,
  parseAllowedOutboundHostsAnnotation,
} from '../src/outbound-hosts.mjs';

describe('parsing an allowed host', () => {
  it('takes the well-known port of the scheme when none is given; a trailing slash is dropped', () => {
    expect(parseAllowedHost('http://spin.fermyon.dev')).toMatchObject({
      scheme: 'http',
      host: { kind: 'name', name: 'spin.fermyon.dev' },
      ports: [{ from: 80, to: 81 }],
    });
    expect(parseAllowedHost('http://spin.fermyon.dev/')).toMatchObject({ host: { kind: 'name', name: 'spin.fermyon.dev' }, ports: [{ from: 80, to: 81 }] });
    expect(parseAllowedHost('https://spin.fermyon.dev').ports).toEqual([{ from: 443, to: 444 }]);
    expect(parseAllowedHost('redis://cache').ports).toEqual([{ from: 6379, to: 6380 }]);
    expect(() => parseAllowedHost('tcp://db')).toThrow(/no well-known port/);
  });

  it('ports, port ranges (end excluded) and wildcards', () => {
    expect(parseAllowedHost('http://spin.fermyon.dev:4444').ports).toEqual([{ from: 4444, to: 4445 }]);
    expect(parseAllowedHost('http://spin.fermyon.dev:4444/').ports).toEqual([{ from: 4444, to: 4445 }]);
    expect(parseAllowedHost('http://spin.fermyon.dev:4444..5555').ports).toEqual([{ from: 4444, to: 5555 }]);
    expect(parseAllowedHost('*://spin.fermyon.dev:7777')).toMatchObject({ scheme: '*', ports: [{ from: 7777, to: 7778 }] });
    expect(parseAllowedHost('*://*:*')).toMatchObject({ scheme: '*', host: { kind: 'any' }, ports: 'any' });
    expect(() => parseAllowedHost('http://a:x..9')).toThrow(/non-number/);
    expect(() => parseAllowedHost('http://a:70000')).toThrow(/not a number/);
  });

  it('self, subdomain wildcards, IP addresses and CIDR blocks', () => {
    expect(parseAllowedHost('http://self').host).toEqual({ kind: 'self' });
    expect(parseAllowedHost('http://*.example.com').host).toEqual({ kind: 'subdomain', suffix: '.example.com' });
    expect(parseAllowedHost('http://192.168.1.1:3002')).toMatchObject({ host: { kind: 'name', name: '192.168.1.1' }, ports: [{ from: 3002, to: 3003 }] });
    expect(parseAllowedHost('http://[::1]:8001').host).toEqual({ kind: 'name', name: '[::1]' });
    expect(() => parseAllowedHost('http://[::1]')).toThrow(AllowedHostError);
    expect(parseAllowedHost('*://127.0.0.0/24:80').host).toEqual({ kind: 'cidr', address: '127.0.0.0', prefix: 24, family: 'ipv4' });
    expect(parseAllowedHost('*://ff00::/8:80').host).toEqual({ kind: 'cidr', address: 'ff00::', prefix: 8, family: 'ipv6' });
    expect(() => parseAllowedHost('*://127.0.0.0/24')).toThrow(AllowedHostError);
  });

  it('refuses what Spin refuses: no scheme, paths, misplaced wildcards, lists, insecure:allow-all', () => {
    for (const bad of ['spin.fermyon.dev', 'spin.fermyon.dev:80', 'localhost', 'localhost:3001', '*', ''])
      expect(() => parseAllowedHost(bad), bad).toThrow(AllowedHostError);
    expect(parseAllowedHost('http://localhost:3001').host).toEqual({ kind: 'name', name: 'localhost' });
    for (const bad of ['http://spin.fermyon.dev/a', 'http://spin.fermyon.dev:6666/a/b', 'http://*.fermyon.dev/a'])
      expect(() => parseAllowedHost(bad), bad).toThrow(/path/);
    expect(() => parseAllowedHost('http://a.*.com')).toThrow(/wildcard/);
    expect(() => parseAllowedHost('http://*.a.*.com')).toThrow(/wildcard/);
    expect(() => parseAllowedHost('{http,https}://a')).toThrow(/lists/);
    expect(() => parseAllowedHost('ht1p://a')).toThrow(/letter/);
    expect(() => parseAllowedHosts(['insecure:allow-all'])).toThrow(/\*:\/\/\*:\*/);
    expect(() => parseAllowedHosts(['spin.fermyon.dev', 'insecure:allow-all'])).toThrow(AllowedHostError);
    expect(() => parseAllowedHosts(['https://ok', 'nope'])).toThrow(/allowed outbound host "nope"/);
  });
});

describe('matching', () => {
  it('specific hosts: scheme, host and port must all match', () => {
    const p = parseAllowedHosts(['*://spin.fermyon.dev:443', 'http://example.com:8383']);
    expect(allowsUrl(p, 'http://example.com:8383/foo/bar', 'http')).toBe(true);
    expect(allowsUrl(p, 'https://spin.fermyon.dev', 'https')).toBe(true);
    expect(allowsUrl(p, 'https://spin.fermyon.dev/', 'https')).toBe(true);
    expect(allowsUrl(p, 'http://example.com/', 'http')).toBe(false);
    expect(allowsUrl(p, 'http://google.com/', 'http')).toBe(false);
    expect(allowsUrl(p, 'spin.fermyon.dev:443', 'https')).toBe(true);
    expect(allowsUrl(p, 'example.com:8383', 'http')).toBe(true);
  });

  it('a trailing slash in the entry changes nothing', () => {
    const p = parseAllowedHosts(['https://my.api.com/']);
    expect(allowsUrl(p, 'https://my.api.com', 'https')).toBe(true);
    expect(allowsUrl(p, 'https://my.api.com/', 'https')).toBe(true);
  });

  it('subdomain wildcards match subdomains at any depth, not the domain itself', () => {
    const p = parseAllowedHosts(['http://*.example.com', 'http://*.example2.com:8383']);
    expect(allowsUrl(p, 'http://a.example.com/foo/bar', 'http')).toBe(true);
    expect(allowsUrl(p, 'http://a.b.example.com/foo/bar', 'http')).toBe(true);
    expect(allowsUrl(p, 'http://a.b.example2.com:8383/foo/bar', 'http')).toBe(true);
    expect(allowsUrl(p, 'http://a.b.example2.com/foo/bar', 'http')).toBe(false);
    expect(allowsUrl(p, 'http://example.com/foo/bar', 'http')).toBe(false);
    expect(allowsUrl(p, 'http://example.com:8383/foo/bar', 'http')).toBe(false);
    expect(allowsUrl(p, 'http://myexample.com/foo/bar', 'http')).toBe(false);
  });

  it('CIDR blocks and socket destinations (tcp/udp schemes)', () => {
    const p = parseAllowedHosts(['*://127.0.0.1/24:63551', 'tcp://[::1]:7', 'udp://10.0.0.0/8:53']);
    expect(allowsUrl(p, 'tcp://127.0.0.1:63551', 'tcp')).toBe(true);
    expect(allowsDestination(p, { scheme: 'tcp', host: '127.0.0.200', port: 63551 })).toBe(true);
    expect(allowsDestination(p, { scheme: 'tcp', host: '127.0.1.1', port: 63551 })).toBe(false);
    expect(allowsDestination(p, { scheme: 'tcp', host: '::1', port: 7 })).toBe(true);
    expect(allowsDestination(p, { scheme: 'udp', host: '::1', port: 7 })).toBe(false);
    expect(allowsDestination(p, { scheme: 'udp', host: '10.96.0.10', port: 53 })).toBe(true);
    expect(allowsDestination(p, { scheme: 'tcp', host: '10.96.0.10', port: 53 })).toBe(false);
  });

  it('port ranges exclude their end; names compare without case', () => {
    const p = parseAllowedHosts(['tcp://Db.Example.com:5000..5002']);
    expect(allowsDestination(p, { scheme: 'tcp', host: 'db.example.com', port: 5000 })).toBe(true);
    expect(allowsDestination(p, { scheme: 'tcp', host: 'db.example.com', port: 5001 })).toBe(true);
    expect(allowsDestination(p, { scheme: 'tcp', host: 'db.example.com', port: 5002 })).toBe(false);
  });

  it('self allows relative URLs only; *://*:* and no policy allow everything; an empty list nothing', () => {
    const self = parseAllowedHosts(['http://self']);
    expect(allowsRelative(self, ['http'])).toBe(true);
    expect(allowsRelative(self, ['https'])).toBe(false);
    expect(allowsUrl(self, 'http://self/', 'http')).toBe(false);
    const all = parseAllowedHosts(['*://*:*']);
    expect(allowsUrl(all, 'https://anything.example:9', 'https')).toBe(true);
    expect(allowsDestination(all, { scheme: 'udp', host: '1.2.3.4', port: 53 })).toBe(true);
    expect(allowsDestination(undefined, { scheme: 'tcp', host: '1.2.3.4', port: 1 })).toBe(true);
    expect(allowsDestination(parseAllowedHosts([]), { scheme: 'tcp', host: '1.2.3.4', port: 1 })).toBe(false);
  });
});

describe('the pod annotation', () => {
  it('is a JSON list, or entries separated by commas or white space', () => {
    expect(parseAllowedOutboundHostsAnnotation('["https://a.example", "tcp://10.0.0.1:5432"]').entries.map((e) => e.original)).toEqual([
      'https://a.example',
      'tcp://10.0.0.1:5432',
    ]);
    expect(parseAllowedOutboundHostsAnnotation('https://a.example, tcp://*:5432\n  http://self').entries).toHaveLength(3);
    expect(parseAllowedOutboundHostsAnnotation('').entries).toEqual([]);
    expect(() => parseAllowedOutboundHostsAnnotation('["a",')).toThrow(/JSON/);
    expect(() => parseAllowedOutboundHostsAnnotation('[1]')).toThrow(/strings/);
  });
});
