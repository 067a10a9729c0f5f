/**
 * Registry authentication: anonymous, basic, a pre-issued bearer token, and
 * the distribution token flow:
 *
 *   request ──401 + WWW-Authenticate: Bearer realm,service,scope──▶ GET realm?service&scope
 *      ▲                                   (basic auth with the credential, if any)
 *      └──────────── retry with Authorization: Bearer <token> ◀──┘
 *
 * Tokens are cached per host, scope and credential until shortly before they expire;
 * the scheme a host asked for is remembered so later requests authenticate up front.
 */
import type { RegistryCredential } from '@nodelet/plugin-api/v1';
import { MAX_TOKEN_BYTES, readCapped } from './body-limits.ts';
import { registryErrorFrom, RegistryError } from './registry-error.ts';
import { isOk, type RegistryTransport } from './registry-transport.ts';

/** A parsed `WWW-Authenticate` challenge. */
export interface Challenge {
  readonly scheme: string;
  readonly params: Readonly<Record<string, string>>;
}

/** Parses the first challenge of a `WWW-Authenticate` header (`Bearer realm="...",service="..."`). */
export function parseChallenge(header: string | undefined): Challenge | undefined {
  const m = header?.match(/^\s*([A-Za-z][\w-]*)\s*(.*)$/s);
  if (!m) return undefined;
  const params: Record<string, string> = {};
  const re = /([\w-]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^,\s]*))\s*,?\s*/gy;
  re.lastIndex = 0;
  let p: RegExpExecArray | null;
  const rest = m[2] ?? '';
  while ((p = re.exec(rest)) !== null) {
    params[p[1]!.toLowerCase()] = p[2] !== undefined ? p[2].replace(/\\(.)/g, '$1') : (p[3] ?? '');
  }
  return { scheme: m[1]!.toLowerCase(), params };
}

/** The `Authorization` header for basic auth, or undefined without a username. */
function basicHeader(cred: RegistryCredential | undefined): string | undefined {
  if (!cred?.username) return undefined;
  return `Basic ${Buffer.from(`${cred.username}:${cred.password ?? ''}`).toString('base64')}`;
}

const credKey = (cred: RegistryCredential | undefined) => (cred ? `${cred.username ?? ''}\0${cred.password ?? ''}\0${cred.token ?? ''}` : '');
const TOKEN_SLACK_MS = 10_000;

/** Holds learned schemes and cached tokens for every registry nodelet talks to. */
export class RegistryAuth {
  private readonly schemes = new Map<string, 'basic' | 'bearer'>();
  private readonly tokens = new Map<string, { header: string; expiresAt: number }>();

  constructor(
    private readonly send: RegistryTransport,
    private readonly userAgent: string,
  ) {}

  /** The header to send before any challenge, from what the host asked for last time. */
  upFront(host: string, scope: string, cred: RegistryCredential | undefined): string | undefined {
    if (cred?.token && !cred.username) return `Bearer ${cred.token}`;
    const scheme = this.schemes.get(host);
    if (scheme === 'basic') return basicHeader(cred);
    if (scheme !== 'bearer') return undefined;
    const cached = this.tokens.get(`${host}\0${scope}\0${credKey(cred)}`);
    return cached && cached.expiresAt > Date.now() ? cached.header : undefined;
  }

  /**
   * Answers a 401 challenge; returns the header to retry with, or undefined when
   * retrying cannot help (no credential for basic auth, unknown scheme).
   */
  async answer(
    host: string,
    scope: string,
    cred: RegistryCredential | undefined,
    header: string | undefined,
    signal?: AbortSignal,
  ): Promise<string | undefined> {
    const challenge = parseChallenge(header);
    if (challenge?.scheme === 'basic') {
      this.schemes.set(host, 'basic');
      return basicHeader(cred);
    }
    if (challenge?.scheme !== 'bearer' || !challenge.params.realm) return undefined;
    this.schemes.set(host, 'bearer');
    const token = await this.fetchToken(challenge.params, scope, cred, signal);
    this.tokens.set(`${host}\0${scope}\0${credKey(cred)}`, token);
    return token.header;
  }

  private async fetchToken(params: Readonly<Record<string, string>>, scope: string, cred: RegistryCredential | undefined, signal?: AbortSignal) {
    const url = new URL(params.realm!);
    if (params.service) url.searchParams.set('service', params.service);
    // Ask for what nodelet needs (push,pull when pushing) and for what the registry named, if different.
    url.searchParams.append('scope', scope);
    if (params.scope && params.scope !== scope) url.searchParams.append('scope', params.scope);
    const headers: Record<string, string> = { 'User-Agent': this.userAgent };
    const basic = basicHeader(cred);
    if (basic) headers.Authorization = basic;
    const res = await this.send(url.href, { method: 'GET', headers, signal });
    if (!isOk(res)) throw await registryErrorFrom(res, 'GET token');
    const text = (await readCapped(res.body, MAX_TOKEN_BYTES, `token response of ${url.origin}${url.pathname}`)).toString('utf8');
    let body: { token?: unknown; access_token?: unknown; expires_in?: unknown } = {};
    try {
      body = JSON.parse(text) ?? {};
    } catch {
      /* not JSON: reported as no token below */
    }
    const token = typeof body.token === 'string' ? body.token : typeof body.access_token === 'string' ? body.access_token : undefined;
    if (!token) throw new RegistryError(res.status, undefined, `token endpoint ${url.origin}${url.pathname} returned no token`);
    const ttl = typeof body.expires_in === 'number' && body.expires_in > 0 ? body.expires_in * 1000 : 60_000;
    return { header: `Bearer ${token}`, expiresAt: Date.now() + Math.max(ttl - TOKEN_SLACK_MS, 1000) };
  }
}
