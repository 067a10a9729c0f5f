/**
 * Spin's HTTP routing (spinframework/spin, crates/http `routes.rs`, crates/trigger-http
 * `headers.rs`), for the `spin` handler's front server:
 *
 *   route as written      matches                         spin-path-info
 *   /hello                /hello (and /hello/)            ""
 *   /api/...              /api, /api/, /api/a/b           "", "/", "/a/b"
 *   /users/:id/...        /users/42, /users/42/x          spin-path-match-id: 42
 *   /...                  everything                      the whole path
 *
 * The best of several matching routes is chosen segment by segment: a literal segment beats a
 * `:param`, which beats the trailing wildcard (so exact routes beat wildcards, and the longest
 * literal prefix wins); a route without a wildcard beats one with. When two triggers have the
 * same route, the later one wins (Spin warns; so does nodelet). The base path is always `/`
 * (Spin 3 has no other).
 */

/** A route's segments: literal text, a named parameter, or the trailing wildcard. */
type Segment = { readonly kind: 'literal'; readonly text: string } | { readonly kind: 'param'; readonly name: string } | { readonly kind: 'wildcard' };

/** A parsed route, served by one component. */
export interface SpinRoute {
  readonly component: string;
  /** The route as written in the app. */
  readonly raw: string;
  /** With the base (`/`) applied: the raw route without a trailing `/`, made absolute. */
  readonly based: string;
  readonly segments: readonly Segment[];
}

/** What a request matched. */
export interface SpinRouteMatch {
  readonly route: SpinRoute;
  /** The part of the path the trailing wildcard took (`""` for an exact route). */
  readonly pathInfo: string;
  /** `:name` parameters and their values. */
  readonly params: ReadonlyMap<string, string>;
}

const rank = (s: Segment) => (s.kind === 'literal' ? 0 : s.kind === 'param' ? 1 : 2);

/** Parses a route as Spin does (`/...` or `/*` at the end: a wildcard). Throws for a malformed one. */
export function parseRoute(raw: string, component: string): SpinRoute {
  const abs = raw.startsWith('/') ? raw : `/${raw}`;
  const based = abs.endsWith('/') ? abs.slice(0, -1) : abs;
  let body = based;
  let wildcard = false;
  if (body.endsWith('/...') || body === '/...') {
    body = body.slice(0, -4);
    wildcard = true;
  } else if (body.endsWith('/*')) {
    body = body.slice(0, -2);
    wildcard = true;
  }
  const segments: Segment[] = [];
  for (const part of body.split('/').slice(1)) {
    if (part === '' || part === '...' || part === '*')
      throw new Error(`route ${JSON.stringify(raw)} of component ${JSON.stringify(component)} has an empty or misplaced wildcard segment`);
    if (part.startsWith(':')) {
      if (part.length === 1) throw new Error(`route ${JSON.stringify(raw)} of component ${JSON.stringify(component)} has a parameter without a name`);
      segments.push({ kind: 'param', name: part.slice(1) });
    } else segments.push({ kind: 'literal', text: part });
  }
  if (wildcard) segments.push({ kind: 'wildcard' });
  return { component, raw, based, segments };
}

/** The routes of an app's HTTP triggers, looked up per request. */
export class SpinRouter {
  readonly routes: readonly SpinRoute[];
  /** Routes written twice: the later trigger serves it (as in Spin). */
  readonly duplicates: readonly string[];

  constructor(triggers: Iterable<{ readonly route: string; readonly component: string }>) {
    const byRoute = new Map<string, SpinRoute>();
    const duplicates: string[] = [];
    for (const t of triggers) {
      const r = parseRoute(t.route, t.component);
      if (byRoute.has(r.based)) duplicates.push(r.based || '/');
      byRoute.delete(r.based);
      byRoute.set(r.based, r);
    }
    this.routes = [...byRoute.values()];
    this.duplicates = duplicates;
  }

  /** The best route for `path` (no query), or undefined. */
  match(path: string): SpinRouteMatch | undefined {
    const parts = path.split('/').slice(1);
    let best: { m: SpinRouteMatch; ranks: number[] } | undefined;
    for (const route of this.routes) {
      const m = matchRoute(route, path, parts);
      if (!m) continue;
      const ranks = route.segments.map(rank);
      if (!best || better(ranks, best.ranks)) best = { m, ranks };
    }
    return best?.m;
  }
}

/** True when `a` ranks before `b`: segment by segment, then the shorter (no trailing wildcard). */
function better(a: number[], b: number[]): boolean {
  for (let i = 0; i < Math.min(a.length, b.length); i++) if (a[i] !== b[i]) return a[i]! < b[i]!;
  return a.length < b.length;
}

function matchRoute(route: SpinRoute, path: string, parts: string[]): SpinRouteMatch | undefined {
  const params = new Map<string, string>();
  const segs = route.segments;
  const wildcard = segs.at(-1)?.kind === 'wildcard';
  const fixed = wildcard ? segs.length - 1 : segs.length;
  // An exact route also matches the path with one trailing '/'; the root route matches '/'.
  const effective = !wildcard && parts.length === fixed + 1 && parts.at(-1) === '' ? parts.slice(0, -1) : parts;
  if (wildcard ? effective.length < fixed : effective.length !== fixed) return undefined;
  for (let i = 0; i < fixed; i++) {
    const s = segs[i]!;
    const p = effective[i]!;
    if (s.kind === 'literal') {
      if (s.text !== p) return undefined;
    } else if (s.kind === 'param') {
      if (p === '') return undefined;
      params.set(s.name, decodeSafe(p));
    }
  }
  if (!wildcard) return { route, pathInfo: '', params };
  const prefixLength = fixed === 0 ? 0 : parts.slice(0, fixed).join('/').length + 1;
  return { route, pathInfo: path.slice(prefixLength), params };
}

function decodeSafe(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

/** The headers Spin adds to a request for its component (names in lower case, as Spin sends them). */
export function spinRequestHeaders(
  m: SpinRouteMatch,
  pathAndQuery: string,
  host: string | undefined,
  client: { address?: string; port?: number },
): Record<string, string> {
  const addr = client.address ?? '';
  const clientAddr = addr.includes(':') ? `[${addr}]:${client.port ?? 0}` : `${addr}:${client.port ?? 0}`;
  const headers: Record<string, string> = {
    'spin-path-info': m.pathInfo,
    'spin-full-url': `http://${host || 'localhost'}${pathAndQuery}`,
    'spin-matched-route': m.route.based,
    'spin-base-path': '/',
    'spin-raw-component-route': m.route.raw,
    'spin-component-route': m.route.raw.endsWith('/...') ? m.route.raw.slice(0, -4) : m.route.raw,
    'spin-client-addr': clientAddr,
  };
  for (const [name, value] of m.params) headers[`spin-path-match-${name.toLowerCase()}`] = value;
  return headers;
}

/** True for a header a client may not set itself (Spin's own, overwritten or removed before the component sees the request). */
export const isSpinHeader = (name: string) => name.toLowerCase().startsWith('spin-');
