/**
 * Choosing registry credentials for an image, like the kubelet's credential
 * keyring: a credential's `registry` may be `host[:port]`, `host[:port]/path`
 * (a repository prefix), `*.domain` (one label), or a URL (`https://index.docker.io/v1/`).
 * Every matching credential is a candidate, most specific first; anonymous when none match.
 */
import { createHash } from 'node:crypto';
import type { RegistryCredential } from '@nodelet/plugin-api/v1';
import { DOCKER_HUB_DOMAIN, type ImageReference } from './reference.ts';

const DOCKER_HUB_ALIASES = new Set(['index.docker.io', 'registry-1.docker.io', 'registry.hub.docker.com', DOCKER_HUB_DOMAIN]);

/** Splits a credential's `registry` into a normalised host and an optional path prefix. */
function normalise(registry: string): { host: string; path: string } {
  const bare = registry
    .trim()
    .replace(/^[a-z]+:\/\//i, '')
    .replace(/\/+$/, '');
  const slash = bare.indexOf('/');
  const rawHost = (slash < 0 ? bare : bare.slice(0, slash)).toLowerCase();
  let path = slash < 0 ? '' : bare.slice(slash + 1);
  const host = DOCKER_HUB_ALIASES.has(rawHost) ? DOCKER_HUB_DOMAIN : rawHost;
  if (host === DOCKER_HUB_DOMAIN && /^v[12]$/.test(path)) path = '';
  return { host, path };
}

function hostMatches(pattern: string, domain: string): boolean {
  if (pattern === domain) return true;
  if (!pattern.startsWith('*.')) return false;
  const [patHost, patPort] = pattern.slice(2).split(':');
  const [host, port] = domain.split(':');
  const dot = host!.indexOf('.');
  return dot > 0 && host!.slice(dot + 1) === patHost && patPort === port;
}

function pathMatches(prefix: string, path: string): boolean {
  return prefix === '' || path === prefix || path.startsWith(`${prefix}/`);
}

/** The credentials to try for `ref`, most specific (longest path prefix) first; `[undefined]` for anonymous. */
export function credentialsFor(ref: ImageReference, creds: readonly RegistryCredential[]): (RegistryCredential | undefined)[] {
  const matching = creds
    .map((cred) => ({ cred, ...normalise(cred.registry) }))
    .filter((c) => hostMatches(c.host, ref.domain) && pathMatches(c.path, ref.path))
    .sort((a, b) => b.path.length - a.path.length);
  return matching.length > 0 ? matching.map((c) => c.cred) : [undefined];
}

/** A stable key for a credential list, so pulls made as different identities are not merged. */
export function credentialsKey(creds: readonly (RegistryCredential | undefined)[]): string {
  const plain = creds.map((c) => (c ? JSON.stringify([c.username, c.password, c.token]) : '-')).join('|');
  return createHash('sha256').update(plain).digest('hex');
}
