/**
 * Routing answers that depend on the request line only, given before Fastify
 * parses a body: a path served for other methods answers `405: Method Not
 * Allowed` (go-restful's text, as upstream's kubelet server answers), an unknown
 * path `404 page not found`. Without this, an unknown method such as `QUERY`
 * reached Fastify's content-type parsing for the not-found route and became a 500.
 */
import type { FastifyInstance } from 'fastify';
import { sendText } from './container-logs.ts';

/** A registered route: its URL pattern as a regular expression and its methods. */
interface KnownRoute {
  readonly pattern: RegExp;
  readonly methods: Set<string>;
}

/** `/containerLogs/:ns/:pod/:c` → `^/containerLogs/[^/]+/[^/]+/[^/]+$`; `*` matches the rest. */
function patternOf(url: string): RegExp {
  const parts = url.split('/').map((p) => {
    if (p.startsWith(':')) return '[^/]+';
    if (p === '*') return '.*';
    return p.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  });
  return new RegExp(`^${parts.join('/')}$`);
}

/**
 * Installs the guard on `app`: call it before registering routes (it learns them
 * through `onRoute`) and after authentication hooks (it answers in `onRequest`).
 */
export function installMethodGuard(app: FastifyInstance): void {
  const routes = new Map<string, KnownRoute>();
  app.addHook('onRoute', (r) => {
    const known = routes.get(r.url) ?? { pattern: patternOf(r.url), methods: new Set<string>() };
    for (const m of [r.method].flat()) known.methods.add(m.toUpperCase());
    if (known.methods.has('GET')) known.methods.add('HEAD');
    routes.set(r.url, known);
  });
  app.addHook('onRequest', async (req, reply) => {
    if (reply.sent) return undefined;
    const path = req.url.split('?')[0] ?? '/';
    let pathKnown = false;
    for (const r of routes.values()) {
      if (!r.pattern.test(path)) continue;
      if (r.methods.has(req.method)) return undefined;
      pathKnown = true;
    }
    return pathKnown ? sendText(reply, 405, '405: Method Not Allowed') : sendText(reply, 404, '404 page not found');
  });
}

/** Status for an error: a client error Fastify raised from the request (4xx) keeps its status; anything else is 500. */
export function errorStatus(err: unknown): number {
  const s = (err as { statusCode?: unknown } | null)?.statusCode;
  return typeof s === 'number' && s >= 400 && s < 500 ? s : 500;
}
