/**
 * Image references, parsed like docker/distribution's `reference` package:
 *
 *   reference := [domain '/'] path [':' tag] ['@' digest]
 *   domain    := host [':' port]        (first component with '.', ':', or 'localhost', or uppercase)
 *   path      := component ('/' component)*, component := [a-z0-9]+ ((.|_|__|-+) [a-z0-9]+)*
 *   tag       := [\w][\w.-]{0,127}
 *   digest    := 'sha256:' 64 lowercase hex (the only algorithm nodelet stores)
 *
 * Normalisation as docker: no domain → `docker.io`; `index.docker.io` → `docker.io`;
 * a single-component path on docker.io gets `library/`; no tag and no digest → `latest`.
 */
import { nodeletError } from '../errors/index.ts';

/** The docker hub's familiar domain and the host that actually serves its API. */
export const DOCKER_HUB_DOMAIN = 'docker.io';
const DOCKER_HUB_REGISTRY = 'registry-1.docker.io';

/** A parsed, normalised image reference. */
export interface ImageReference {
  /** Registry domain with optional port (`docker.io`, `127.0.0.1:5000`). */
  readonly domain: string;
  /** Repository path inside the registry (`library/nginx`). */
  readonly path: string;
  /** The tag; `latest` when neither tag nor digest was given. */
  readonly tag?: string;
  /** `sha256:<hex>` when the reference pins a digest. */
  readonly digest?: string;
}

const HOST_COMPONENT = '(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])';
const DOMAIN_RE = new RegExp(`^(?:${HOST_COMPONENT}(?:\\.${HOST_COMPONENT})*|\\[[a-fA-F0-9:]+\\])(?::[0-9]+)?$`);
const PATH_COMPONENT_RE = /^[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*$/;
const TAG_RE = /^[\w][\w.-]{0,127}$/;
const DIGEST_RE = /^[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9A-Fa-f]{32,}$/;
const SHA256_RE = /^sha256:[0-9a-f]{64}$/;
const NAME_MAX = 255;

const invalid = (ref: string, why: string) => nodeletError('NDL_IMAGE_REFERENCE', `"${ref}": ${why}`);

/** True when the first path component names a registry host rather than a repository. */
function isDomain(component: string): boolean {
  return /[.:]/.test(component) || component === 'localhost' || component.toLowerCase() !== component;
}

function splitDigest(ref: string, s: string): [string, string | undefined] {
  const at = s.indexOf('@');
  if (at < 0) return [s, undefined];
  const digest = s.slice(at + 1);
  if (!DIGEST_RE.test(digest)) throw invalid(ref, `invalid digest "${digest}"`);
  if (!SHA256_RE.test(digest)) throw invalid(ref, `unsupported digest "${digest}" (only sha256 with 64 lowercase hex digits)`);
  return [s.slice(0, at), digest];
}

function splitTag(ref: string, s: string): [string, string | undefined] {
  const colon = s.lastIndexOf(':');
  if (colon < 0 || colon < s.lastIndexOf('/')) return [s, undefined];
  const tag = s.slice(colon + 1);
  if (!TAG_RE.test(tag)) throw invalid(ref, `invalid tag "${tag}"`);
  return [s.slice(0, colon), tag];
}

function splitDomain(ref: string, name: string): [string, string] {
  const slash = name.indexOf('/');
  if (slash < 0 || !isDomain(name.slice(0, slash))) return [DOCKER_HUB_DOMAIN, name];
  const domain = name.slice(0, slash);
  if (!DOMAIN_RE.test(domain)) throw invalid(ref, `invalid registry host "${domain}"`);
  return [domain === 'index.docker.io' ? DOCKER_HUB_DOMAIN : domain, name.slice(slash + 1)];
}

function checkPath(ref: string, path: string): void {
  if (path === '') throw invalid(ref, 'repository name is empty');
  if (path.toLowerCase() !== path) throw invalid(ref, 'repository name must be lowercase');
  for (const c of path.split('/')) {
    if (!PATH_COMPONENT_RE.test(c)) throw invalid(ref, `invalid repository name component "${c}"`);
  }
}

/** Parses and normalises `ref`; throws `NDL_IMAGE_REFERENCE` when it is not a valid reference. */
export function parseReference(ref: string): ImageReference {
  if (typeof ref !== 'string' || ref.trim() === '') throw invalid(String(ref), 'reference is empty');
  if (ref !== ref.trim()) throw invalid(ref, 'reference has surrounding whitespace');
  const [beforeDigest, digest] = splitDigest(ref, ref);
  const [name, tag] = splitTag(ref, beforeDigest);
  if (name.length > NAME_MAX) throw invalid(ref, `repository name longer than ${NAME_MAX} characters`);
  const [domain, rawPath] = splitDomain(ref, name);
  const path = domain === DOCKER_HUB_DOMAIN && !rawPath.includes('/') ? `library/${rawPath}` : rawPath;
  checkPath(ref, path);
  if (tag === undefined && digest === undefined) return { domain, path, tag: 'latest' };
  return { domain, path, ...(tag !== undefined && { tag }), ...(digest !== undefined && { digest }) };
}

/** `domain/path`, the repository part of `imageID` (`docker.io/library/nginx`). */
export function repositoryOf(ref: ImageReference): string {
  return `${ref.domain}/${ref.path}`;
}

/** The host (and port) to talk the distribution API to. */
export function registryHostOf(ref: ImageReference): string {
  return ref.domain === DOCKER_HUB_DOMAIN ? DOCKER_HUB_REGISTRY : ref.domain;
}

/** The fully qualified reference: `domain/path[:tag][@digest]`. */
export function formatReference(ref: ImageReference): string {
  return `${repositoryOf(ref)}${ref.tag !== undefined ? `:${ref.tag}` : ''}${ref.digest !== undefined ? `@${ref.digest}` : ''}`;
}

/** What to ask the registry for: the digest when pinned, else the tag. */
export function manifestReferenceOf(ref: ImageReference): string {
  return ref.digest ?? ref.tag ?? 'latest';
}
