/**
 * Authorization of kubelet API requests, as upstream's
 * `pkg/kubelet/server/auth.go` (GetRequestAttributes) and `server.go`
 * (InstallAuthFilter) do it with KubeletFineGrainedAuthz (GA and locked on in
 * 1.36), so a SubjectAccessReview (Webhook mode) can be plugged in as an
 * {@link Authorizer}:
 *
 * - resource `nodes`, name = the node name, apiVersion `v1`;
 * - verb from the HTTP method: GET→get, POST→create, PUT→update,
 *   PATCH→patch, DELETE→delete (others, HEAD included: empty);
 * - subresources from the (percent-decoded) path, asked in this order:
 *
 *     /pods, /runningpods        → pods, then proxy
 *     /healthz                   → healthz, then proxy
 *     /configz                   → configz, then proxy
 *     /stats                     → stats
 *     /metrics                   → metrics
 *     /logs                      → log
 *     /checkpoint                → checkpoint
 *     /statusz                   → statusz
 *     /flagz                     → configz
 *     anything else (containerLogs, exec, attach, portForward, run, /spec) → proxy
 *
 * The first allowed attribute set wins. A denial is upstream's 403 text,
 * naming every subresource asked:
 * `Forbidden (user=…, verb=…, resource=nodes, subresource(s)=[pods proxy])` and a
 * newline. An authorizer failure stops the loop with a 500
 * `Authorization error (user=…, verb=…, resource=nodes, subresource=…)`.
 * The modes: `Webhook` (webhook-authz.ts) and `AlwaysAllow` ({@link alwaysAllow}).
 */
import type { UserInfo } from './authn.ts';

/** One authorization question, as a SubjectAccessReview's resourceAttributes. */
export interface RequestAttributes {
  readonly user: UserInfo;
  readonly verb: string;
  readonly apiVersion: 'v1';
  readonly resource: 'nodes';
  readonly subresource: string;
  /** The node name. */
  readonly name: string;
  readonly path: string;
}

/** A decision. */
export interface Decision {
  readonly allowed: boolean;
  readonly reason?: string;
}

/**
 * Decides one question (webhook-authz.ts sends a SubjectAccessReview and
 * caches the answer). Rejects when it cannot decide (the server answers 500).
 */
export type Authorizer = (attrs: RequestAttributes) => Decision | Promise<Decision>;

/** `--authorization-mode=AlwaysAllow`: every authenticated caller may do everything. */
export const alwaysAllow: Authorizer = () => ({ allowed: true });

const VERBS: Record<string, string> = { GET: 'get', POST: 'create', PUT: 'update', PATCH: 'patch', DELETE: 'delete' };

/** KubeletFineGrainedAuthz's own subresources: each asked before `proxy`. */
const FINE_GRAINED: ReadonlyArray<readonly [string, string]> = [
  ['/pods', 'pods'],
  ['/healthz', 'healthz'],
  ['/configz', 'configz'],
  ['/runningpods', 'pods'],
];
/** Paths with a subresource of their own and no fallback; every other path is `proxy`. */
const ONLY: ReadonlyArray<readonly [string, string]> = [
  ['/stats', 'stats'],
  ['/metrics', 'metrics'],
  ['/logs', 'log'],
  ['/checkpoint', 'checkpoint'],
  ['/statusz', 'statusz'],
  ['/flagz', 'configz'],
];

/** True if `p` is `root` or below it (upstream's isSubpath). */
function isSubpath(p: string, root: string): boolean {
  return p === root || p.startsWith(`${root}/`);
}

/**
 * The path as Go's `r.URL.Path` has it: percent-decoded (a malformed escape
 * leaves the path as sent). The router matches the first segment literally,
 * so a decoded `%2F` can never reach a handler other than the one this names.
 */
export function decodedPath(rawPath: string): string {
  try {
    return decodeURIComponent(rawPath);
  } catch {
    return rawPath;
  }
}

/** The subresources to ask about for a (decoded) path, in order. */
export function subresourcesFor(p: string): string[] {
  const subs: string[] = [];
  const fine = FINE_GRAINED.find(([root]) => isSubpath(p, root));
  if (fine) subs.push(fine[1]);
  const only = ONLY.find(([root]) => isSubpath(p, root));
  subs.push(only ? only[1] : 'proxy');
  return subs;
}

/** The attribute sets of a request (one, or two with the proxy fallback); `p` is the decoded path. */
export function requestAttributes(user: UserInfo, method: string, p: string, nodeName: string): RequestAttributes[] {
  const verb = VERBS[method] ?? '';
  return subresourcesFor(p).map((subresource) => ({
    user,
    verb,
    apiVersion: 'v1',
    resource: 'nodes',
    subresource,
    name: nodeName,
    path: p,
  }));
}

/** Why a request may not go on: the HTTP status and upstream's text. */
export interface Refusal {
  readonly status: 403 | 500;
  readonly message: string;
  /** Every subresource asked, in order (for the log). */
  readonly subresources: readonly string[];
  /** The authorizer's failure, for the log (500 only). */
  readonly cause?: unknown;
}

/**
 * Asks the authorizer about each attribute set in order; undefined as soon as
 * one is allowed. Else a 403 with upstream's text (the sets differ only by
 * subresource, so user, verb and resource come from the first; Go prints the
 * list as `[a b]`), or, as soon as the authorizer fails, a 500 naming the set
 * it failed on — as upstream's InstallAuthFilter.
 */
export async function authorize(authorizer: Authorizer, attrs: RequestAttributes[]): Promise<Refusal | undefined> {
  const asked: string[] = [];
  for (const a of attrs) {
    asked.push(a.subresource);
    try {
      if ((await authorizer(a)).allowed) return undefined;
    } catch (cause) {
      const message = `Authorization error (user=${a.user.name}, verb=${a.verb}, resource=${a.resource}, subresource=${a.subresource})`;
      return { status: 500, message, subresources: asked, cause };
    }
  }
  const first = attrs[0];
  if (!first) return { status: 403, message: 'Authorization error: could not determine attributes for request', subresources: [] };
  const message = `Forbidden (user=${first.user.name}, verb=${first.verb}, resource=${first.resource}, subresource(s)=[${asked.join(' ')}])\n`;
  return { status: 403, message, subresources: asked };
}
