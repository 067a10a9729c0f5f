// An outbound allow-list with Spin's `allowed_outbound_hosts` semantics (spinframework/spin,
// crates/outbound-networking-config): each entry is `<scheme>://<host>[:<port>]`, and a connection
// is allowed when some entry's scheme, host and port all match it.
//
//   scheme  `*` (any) or one scheme (letters only): `http`, `https`, `tcp`, `udp`, `redis`, …
//   host    `*` (any), `*.example.com` (any name ending `.example.com`, not example.com itself),
//           a name or an IP address (`[::1]` for IPv6) compared as written, a CIDR block
//           (`10.0.0.0/8`, host bits dropped), or `self` / `self.alt` (the app itself by a relative
//           URL: never an absolute destination)
//   port    `*` (any), a number, or a range `a..b` (a inclusive, b exclusive, as Spin's Rust
//           range); none: the scheme's well-known port (http 80, https 443, redis 6379,
//           postgres 5432, mysql 3306, mqtt 1883), an error for any other scheme
//
// A path other than `/` is an error; so are `{…}` lists and `insecure:allow-all` (Spin refuses it
// and points to `*://*:*`). Destinations are matched with the scheme of the path that connects:
// wasi:http's request scheme (`http`/`https`), `tcp` for a wasi:sockets TCP connect, `udp` for a
// UDP destination (as Spin checks wasi:sockets addresses).
//
// Plain JavaScript (JSDoc-typed) so worker threads load it as it is; the provider and other
// packages (a Spin manifest's `allowed_outbound_hosts`) import the same functions.
import { BlockList, isIP } from 'node:net';

/** The pod annotation holding a container's allow-list (see parseAllowedOutboundHostsAnnotation). */
export const ALLOWED_OUTBOUND_HOSTS_ANNOTATION = 'wasi.nodelet.dev/allowed-outbound-hosts';

/**
 * One parsed entry.
 * @typedef {{ kind: 'any' } | { kind: 'subdomain', suffix: string } | { kind: 'self' } | { kind: 'name', name: string } | { kind: 'cidr', address: string, prefix: number, family: 'ipv4' | 'ipv6' }} HostPattern
 * @typedef {{ from: number, to: number }} PortRange  from inclusive, to exclusive
 * @typedef {{ original: string, scheme: string, host: HostPattern, ports: 'any' | PortRange[] }} AllowedHost
 * @typedef {{ readonly entries: readonly AllowedHost[] }} OutboundPolicy
 * @typedef {{ scheme: string, host: string, port?: number }} Destination
 *   `host` as a URL carries it: a name, an IPv4 address, or an IPv6 address in brackets or not
 */

/** A list entry that does not parse; the message says why (and what Spin accepts). */
export class AllowedHostError extends Error {
  /** @param {string} message */
  constructor(message) {
    super(message);
    this.name = 'AllowedHostError';
  }
}

/** The default port of a scheme, as Spin knows them. @param {string} scheme @returns {number | undefined} */
export function wellKnownPort(scheme) {
  return { postgres: 5432, mysql: 3306, redis: 6379, mqtt: 1883, http: 80, https: 443 }[scheme];
}

/**
 * Parses one entry (`<scheme>://<host>[:<port>]`).
 * @param {string} entry
 * @returns {AllowedHost}
 * @throws {AllowedHostError}
 */
export function parseAllowedHost(entry) {
  const text = entry.trim();
  const sep = text.indexOf('://');
  if (sep < 0) {
    if (['*', ':', '', '?'].includes(text))
      throw new AllowedHostError(
        `${JSON.stringify(text)} is not an allowed outbound host: use <scheme>://<host>[:<port>], with '*' wildcards for each; '*://*:*' allows everything`,
      );
    throw new AllowedHostError(`${JSON.stringify(text)} has no scheme (e.g. 'http://' or '*://')`);
  }
  const scheme = text.slice(0, sep);
  const rest = text.slice(sep + 3);
  const colon = rest.lastIndexOf(':');
  const hostPart = colon < 0 ? rest : rest.slice(0, colon);
  let portPart = colon < 0 ? '' : rest.slice(colon + 1);
  const slash = portPart.indexOf('/');
  if (slash >= 0) {
    if (portPart.slice(slash + 1) !== '') throw new AllowedHostError(`${JSON.stringify(text)} has a path, which an allowed host may not have`);
    portPart = portPart.slice(0, slash);
  }
  return { original: entry, scheme: parseScheme(scheme), host: parseHost(hostPart), ports: parsePorts(portPart, scheme) };
}

/** @param {string} scheme */
function parseScheme(scheme) {
  if (scheme === '*') return '*';
  if (scheme.startsWith('{')) throw new AllowedHostError('scheme lists ({…}) are not supported');
  if (!/^\p{L}+$/u.test(scheme)) throw new AllowedHostError(`scheme ${JSON.stringify(scheme)} contains a character that is not a letter`);
  return scheme;
}

/** @param {string} raw @returns {HostPattern} */
function parseHost(raw) {
  let host = raw.trim();
  if (host === '*') return { kind: 'any' };
  if (host === 'self' || host === 'self.alt') return { kind: 'self' };
  if (host.startsWith('{')) throw new AllowedHostError('host lists ({…}) are not supported');
  const cidr = parseCidr(host);
  if (cidr) return cidr;
  const path = host.split('/')[1];
  if (path !== undefined && path !== '') throw new AllowedHostError(`host ${JSON.stringify(host)} has a path, which an allowed host may not have`);
  if (host.startsWith('*.')) {
    const domain = host.slice(2);
    if (domain.includes('*')) throw new AllowedHostError(`host ${JSON.stringify(host)}: a wildcard may only be the first label`);
    return { kind: 'subdomain', suffix: `.${domain}` };
  }
  if (host.includes('*')) throw new AllowedHostError(`host ${JSON.stringify(host)}: a wildcard may only stand for subdomains (*.example.com)`);
  host = host.replace(/\/+$/, '');
  return { kind: 'name', name: host };
}

/** `a.b.c.d/n` or `v6/n`, host bits dropped (as ip_network's truncating parse). @param {string} host @returns {HostPattern | undefined} */
function parseCidr(host) {
  const m = /^([^/]+)\/(\d{1,3})$/.exec(host);
  if (!m) return undefined;
  const address = /** @type {string} */ (m[1]);
  const family = isIP(address);
  const prefix = Number(m[2]);
  if (family === 0 || prefix > (family === 4 ? 32 : 128)) return undefined;
  return { kind: 'cidr', address, prefix, family: family === 4 ? 'ipv4' : 'ipv6' };
}

/** @param {string} port @param {string} scheme @returns {'any' | PortRange[]} */
function parsePorts(port, scheme) {
  if (port === '') {
    const p = wellKnownPort(scheme);
    if (p === undefined) throw new AllowedHostError(`no port was given and the scheme ${JSON.stringify(scheme)} has no well-known port`);
    return [{ from: p, to: p + 1 }];
  }
  if (port === '*') return 'any';
  if (port.startsWith('{')) throw new AllowedHostError('port lists ({…}) are not supported');
  const range = port.split('..');
  if (range.length === 2) {
    const [from, to] = range.map((p) => portNumber(p, `port range ${JSON.stringify(port)} contains a non-number`));
    return [{ from: /** @type {number} */ (from), to: /** @type {number} */ (to) }];
  }
  const p = portNumber(port, `port ${JSON.stringify(port)} is not a number`);
  return [{ from: p, to: p + 1 }];
}

/** @param {string} s @param {string} why */
function portNumber(s, why) {
  if (!/^\d{1,5}$/.test(s) || Number(s) > 65535) throw new AllowedHostError(why);
  return Number(s);
}

/**
 * Parses a whole list. `insecure:allow-all` is refused, as Spin refuses it.
 * @param {readonly string[]} entries
 * @returns {OutboundPolicy}
 * @throws {AllowedHostError} naming the first entry that does not parse
 */
export function parseAllowedHosts(entries) {
  if (entries.includes('insecure:allow-all'))
    throw new AllowedHostError(`'insecure:allow-all' is not an allowed outbound host: use '*://*:*' to allow every destination`);
  return {
    entries: entries.map((e) => {
      try {
        return parseAllowedHost(e);
      } catch (err) {
        if (err instanceof AllowedHostError) throw new AllowedHostError(`allowed outbound host ${JSON.stringify(e)}: ${err.message}`);
        throw err;
      }
    }),
  };
}

/**
 * The pod annotation's value: a JSON list of entries (`["https://api.example.com", "tcp://*:5432"]`),
 * or entries separated by commas and/or white space.
 * @param {string} value
 * @returns {OutboundPolicy}
 * @throws {AllowedHostError}
 */
export function parseAllowedOutboundHostsAnnotation(value) {
  const text = value.trim();
  /** @type {unknown} */
  let list;
  if (text.startsWith('[')) {
    try {
      list = JSON.parse(text);
    } catch (e) {
      throw new AllowedHostError(`not a JSON list: ${/** @type {Error} */ (e).message}`);
    }
    if (!Array.isArray(list) || !list.every((x) => typeof x === 'string')) throw new AllowedHostError('expected a JSON list of strings');
  } else list = text.split(/[\s,]+/).filter((s) => s !== '');
  return parseAllowedHosts(/** @type {string[]} */ (list));
}

/** Whether one entry allows `d`. @param {AllowedHost} e @param {Destination} d */
function entryAllows(e, d) {
  if (e.scheme !== '*' && e.scheme !== d.scheme) return false;
  if (!hostAllows(e.host, d.host.toLowerCase())) return false;
  if (e.ports === 'any') return true;
  const port = d.port ?? wellKnownPort(d.scheme);
  if (port === undefined) return false;
  return e.ports.some((r) => port >= r.from && port < r.to);
}

/** @param {HostPattern} p @param {string} host */
function hostAllows(p, host) {
  switch (p.kind) {
    case 'any':
      return true;
    case 'subdomain':
      return host.endsWith(p.suffix);
    case 'self':
      return false;
    case 'name': {
      const name = p.name.toLowerCase();
      // An IPv6 address is written in brackets in a URL (and so in an entry); accept either form.
      return name === host || name === `[${host}]` || `[${name}]` === host;
    }
    case 'cidr': {
      const bare = host.replace(/^\[|\]$/g, '');
      const fam = isIP(bare);
      if (fam === 0 || (fam === 4 ? 'ipv4' : 'ipv6') !== p.family) return false;
      const list = new BlockList();
      list.addSubnet(p.address, p.prefix, p.family);
      return list.check(bare, p.family);
    }
  }
}

/**
 * Whether `policy` allows a connection to `d`. No policy (undefined): everything is allowed.
 * @param {OutboundPolicy | undefined} policy
 * @param {Destination} d
 */
export function allowsDestination(policy, d) {
  if (!policy) return true;
  return policy.entries.some((e) => entryAllows(e, d));
}

/**
 * Whether `policy` allows a request to `url` (absolute, or `host[:port][/…]` read with
 * `defaultScheme`, as Spin's OutboundUrl reads it). A URL that does not parse is not allowed.
 * @param {OutboundPolicy | undefined} policy
 * @param {string} url
 * @param {string} defaultScheme
 */
export function allowsUrl(policy, url, defaultScheme) {
  if (!policy) return true;
  let u;
  try {
    u = new URL(url);
    if (u.host === '') throw new Error('no host');
  } catch {
    try {
      u = new URL(`${defaultScheme}://${url}`);
    } catch {
      return false;
    }
  }
  const scheme = u.protocol.replace(/:$/, '');
  return allowsDestination(policy, { scheme, host: u.hostname, ...(u.port === '' ? {} : { port: Number(u.port) }) });
}

/**
 * Whether `policy` allows requests to the app itself by a relative URL (an entry whose host is
 * `*` or `self` with one of `schemes`), as Spin allows them.
 * @param {OutboundPolicy | undefined} policy
 * @param {readonly string[]} schemes
 */
export function allowsRelative(policy, schemes) {
  if (!policy) return true;
  return policy.entries.some((e) => (e.scheme === '*' || schemes.includes(e.scheme)) && (e.host.kind === 'any' || e.host.kind === 'self'));
}
